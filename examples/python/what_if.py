#!/usr/bin/env python3
"""What if the NICs were slower or faster? Iteration time and MFU of a scenario over NIC bandwidth.

    PYTHONPATH=build/python python3 examples/python/what_if.py [--scenario FILE] [--png FILE]

One exasim.sweep over machine.node.nic_bandwidth_Bps, printed as a table; with matplotlib importable,
also plotted to a PNG (Agg backend: no display needed). docs/python.md describes the module.
"""
import argparse
import sys

try:
    import exasim
except ImportError as e:  # 77: ctest's skip code, as when the module was not built
    print(f"what_if.py: cannot import exasim ({e}): build it and put build/python on PYTHONPATH", file=sys.stderr)
    sys.exit(77)

GBPS = 1e9
BANDWIDTHS_GBPS = [6.25, 12.5, 25, 50, 100]  # per NIC and direction; simple-a100 ships 25 (Slingshot-11)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", default="configs/scenarios/default.json")
    parser.add_argument("--png", default="what_if.png", help="where the plot goes (when matplotlib imports)")
    parser.add_argument("--set", action="append", default=[], metavar="PATH=VALUE",
                        help="override a scenario field for every point, as exasim's --set")
    args = parser.parse_args()

    key = "machine.node.nic_bandwidth_Bps"
    result = exasim.sweep(args.scenario, vary={key: [b * GBPS for b in BANDWIDTHS_GBPS]}, sets=args.set)
    rows = [(r["point"][key] / GBPS, r["iteration_time_s"], r["mfu_percent"]) for r in result["rows"]]

    print(f"{result['scenario']}: iteration time and MFU over NIC bandwidth")
    print(f"{'NIC GB/s':>9} {'iteration s':>12} {'MFU %':>7} {'vs first':>9}")
    for gbps, time_s, mfu in rows:
        print(f"{gbps:9.2f} {time_s:12.4f} {mfu:7.1f} {rows[0][1] / time_s:8.2f}x")

    try:
        import matplotlib
    except ImportError:
        print("matplotlib not importable: no plot")
        return
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, time_axis = plt.subplots(figsize=(6, 4))
    time_axis.plot([r[0] for r in rows], [r[1] for r in rows], "o-", color="tab:blue")
    time_axis.set_xscale("log", base=2)
    time_axis.set_xticks(BANDWIDTHS_GBPS, labels=[f"{b:g}" for b in BANDWIDTHS_GBPS])
    time_axis.minorticks_off()
    time_axis.set_xlabel("NIC bandwidth (GB/s per direction)")
    time_axis.set_ylabel("iteration time (s)", color="tab:blue")
    mfu_axis = time_axis.twinx()
    mfu_axis.plot([r[0] for r in rows], [r[2] for r in rows], "s--", color="tab:orange")
    mfu_axis.set_ylabel("MFU (%)", color="tab:orange")
    time_axis.set_title(f"exasim: {result['scenario']} over NIC bandwidth")
    fig.tight_layout()
    fig.savefig(args.png, dpi=100)
    print(f"plot written to {args.png}")


if __name__ == "__main__":
    main()
