// The bucket kernels of the MSM alone (G1 and G2), for quick `ptxas -v`
// register and spill counts under different macro settings
// (make ecregs ECREGS_FLAGS="..."; nothing here is run).
#include "../msm.cuh"

namespace c2 {
#define C2_EC_REGS_KERNELS(F)                                                                                     \
    template __global__ void k_run_tasks<F>(const uint32_t*, uint32_t, const uint32_t*, const uint32_t*,           \
                                            const uint32_t*, const uint32_t*, uint32_t, const uint32_t*,           \
                                            const affine_t<F>*, xyzz_t<F>*, xyzz_t<F>*, uint32_t);                 \
    template __global__ void k_fold_extras<F>(const uint32_t*, uint32_t, const uint32_t*, xyzz_t<F>*, uint32_t); \
    template __global__ void k_batch_add<F>(const affine_t<F>*, const uint64_t*, uint64_t, uint64_t, uint32_t,    \
                                            xyzz_t<F>*);
C2_EC_REGS_KERNELS(fp_t)
C2_EC_REGS_KERNELS(fp2_t)
}  // namespace c2
