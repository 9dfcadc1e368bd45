#include "traces/kernel_class.hpp"

#include <catch2/catch.hpp>

using namespace exasim::trace;

// One name per rule of docs/traces.md, taken from real traces (the two in traces/testdata, and names
// cuBLAS, hipBLASLt, FlashAttention and NCCL print) so that a rule that stops matching fails here.
TEST_CASE("kernel names fall in the class of their rule", "[unit]") {
  struct Case {
    const char* name;
    KernelClass expected;
  };
  const Case cases[] = {
      {"ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)", KernelClass::Collective},
      {"ncclDevKernel_AllGather_RING_LL(ncclDevComm*, unsigned long, ncclWork*)", KernelClass::Collective},
      {"rcclGenericKernel<1, false>(ncclDevComm*, unsigned long, ncclWork*)", KernelClass::Collective},
      {"void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4> >(Flash_fwd_params)", KernelClass::Attention},
      {"fmha_cutlassF_bf16_aligned_64x128_rf_sm80(PyTorchMemEffAttention::AttentionKernel)", KernelClass::Attention},
      {"Cijk_Alik_Bljk_SB_Bias_AS_SAV_UserArgs_MT64x16x32_MI16x16x1_SN_LDSB0", KernelClass::Gemm},
      {"cutlass::Kernel<cutlass_80_tensorop_s1688gemm_256x64_16x4_nn_align4>(Params)", KernelClass::Gemm},
      {"ampere_sgemm_32x32_sliced1x4_tn", KernelClass::Gemm},
      {"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1", KernelClass::Gemm},
      {"void cublasLt::splitKreduce_kernel<32, 16, int, float, float>(cublasLt::cublasSplitKParams<float>)",
       KernelClass::Gemm},
      {"sm80_xmma_fprop_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nchw", KernelClass::Gemm},
      {"cudnn_infer_ampere_scudnn_128x64_relu_xregs_large_nn_v1", KernelClass::Gemm},
      {"void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float> >(int)",
       KernelClass::Memory},
      {"void cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, int, 128, true, 1, true>(cudnnTensorStruct)",
       KernelClass::Memory},
      {"void (anonymous namespace)::softmax_warp_forward<float, float, float, 10, true, false>(float*)",
       KernelClass::Memory},
      {"void cudnn::ops::nchwToNhwcKernel<float, float, float, false, true>(cudnn::ops::nchw2nhwc_params_t)",
       KernelClass::Memory},
      {"triton_red_fused_native_layer_norm_0", KernelClass::Memory},
      {"void cask_cudnn_infer::computeOffsetsKernel<false, false>(cask_cudnn_infer::ComputeOffsetsParams)",
       KernelClass::Other},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    CHECK(classify_kernel(c.name) == c.expected);
  }
}

TEST_CASE("collective kinds come from the args first, then from the kernel name", "[unit]") {
  CHECK(collective_kind("ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*)", "") == CollectiveKind::AllReduce);
  CHECK(collective_kind("ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL(ncclDevComm*)", "") ==
        CollectiveKind::ReduceScatter);
  CHECK(collective_kind("ncclDevKernel_AllGather_RING_LL(ncclDevComm*)", "") == CollectiveKind::AllGather);
  CHECK(collective_kind("ncclKernel_Broadcast_RING_LL_Sum_int8_t(ncclDevComm*)", "") == CollectiveKind::Broadcast);
  CHECK(collective_kind("ncclDevKernel_SendRecv(ncclDevComm*)", "") == CollectiveKind::SendRecv);
  CHECK(collective_kind("ncclDevKernel_Reduce_Sum_f32_RING_LL(ncclDevComm*)", "") == CollectiveKind::Other);
  // The profiler's `Collective name` wins over the kernel (NCCL runs all-to-all as SendRecv kernels).
  CHECK(collective_kind("ncclDevKernel_SendRecv(ncclDevComm*)", "all_to_all") == CollectiveKind::AllToAll);
  CHECK(collective_kind("ncclDevKernel_Generic", "_allgather_base") == CollectiveKind::AllGather);
  CHECK(collective_kind("ncclDevKernel_Generic", "reduce_scatter_tensor_coalesced") == CollectiveKind::ReduceScatter);
  CHECK(collective_kind("ncclDevKernel_Generic", "allreduce") == CollectiveKind::AllReduce);
  CHECK(collective_kind("ncclDevKernel_Generic", "recv") == CollectiveKind::SendRecv);
}

TEST_CASE("profiler dtype names have their element sizes", "[unit]") {
  CHECK(dtype_bytes("Float") == 4);
  CHECK(dtype_bytes("float") == 4);
  CHECK(dtype_bytes("BFloat16") == 2);
  CHECK(dtype_bytes("c10::BFloat16") == 2);
  CHECK(dtype_bytes("Half") == 2);
  CHECK(dtype_bytes("Long") == 8);
  CHECK(dtype_bytes("Byte") == 1);
  CHECK_FALSE(dtype_bytes("Scalar").has_value());
}

TEST_CASE("GEMM layouts come from cuBLAS, CUTLASS and Tensile kernel names", "[unit]") {
  CHECK(gemm_layout("ampere_sgemm_32x128_nt") == "NT");
  CHECK(gemm_layout("cutlass::Kernel<cutlass_80_tensorop_s1688gemm_256x64_16x4_tn_align4>(Params)") == "TN");
  CHECK(gemm_layout("sm90_xmma_gemm_bf16bf16_bf16f32_f32_nn_n_tilesize128x128x64") == "NN");
  CHECK(gemm_layout("Cijk_Ailk_Bljk_HHS_BH_MT128x128x32") == "NN");
  CHECK(gemm_layout("Cijk_Alik_Bljk_SB_Bias_AS_SAV_UserArgs_MT64x16x32") == "TN");
  CHECK(gemm_layout("Cijk_Ailk_Bjlk_SB_Bias_AS_SAV_UserArgs_MT64x16x16") == "NT");
  CHECK(gemm_layout("void cublasLt::splitKreduce_kernel<32, 16, int, float>(cublasLt::cublasSplitKParams<float>)") ==
        "");
}
