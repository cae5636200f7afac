// G1 instantiation of the MSM, batch-addition and fill kernels.
#include "msm_entries.cuh"

namespace c2 {
C2_MSM_ENTRIES(g1, fp_t, 21)
}  // namespace c2
