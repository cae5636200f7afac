// G2 instantiation of the MSM, batch-addition and fill kernels.
#include "msm_entries.cuh"

namespace c2 {
C2_MSM_ENTRIES(g2, fp2_t, 20)
}  // namespace c2
