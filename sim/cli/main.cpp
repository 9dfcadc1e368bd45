#include "sim/cli/cli.hpp"

#include <iostream>

int main(int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);
  return exasim::cli::run(args, std::cout, std::cerr);
}
