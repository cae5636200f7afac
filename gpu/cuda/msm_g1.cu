// G1 instantiation of the MSM, batch-addition and fill kernels.
#include "msm.cuh"
#include "msm_entry.h"

namespace c2 {

int msm_g1(c2_status* st, stream_ctx* sc, const void* bases, bool bases_dev, const void* scalars, bool scalars_dev,
           uint64_t n, int c, void* out, int* nwindows, int* used_c) {
    return msm_impl<fp_t>(st, sc, (const g1_affine*)bases, bases_dev, (const fr_t*)scalars, scalars_dev, n, c, (g1_xyzz*)out,
                        nwindows, used_c, 21);
}

int batch_add_g1(c2_status* st, stream_ctx* sc, const void* bases, bool bases_dev, const uint64_t* bitmap, uint64_t n,
                 void* out) {
    return batch_add_impl<fp_t>(st, sc, (const g1_affine*)bases, bases_dev, bitmap, n, (g1_xyzz*)out);
}

int fill_g1(c2_status* st, stream_ctx* sc, void* dst, uint64_t n, const void* seeds, uint64_t k) {
    return fill_impl<fp_t>(st, sc, (g1_affine*)dst, n, (const g1_affine*)seeds, k);
}

}  // namespace c2
