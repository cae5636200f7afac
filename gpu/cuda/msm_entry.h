// Per-group MSM entry points, compiled in separate translation units
// (msm_g1.cu, msm_g2.cu) so that they build in parallel.
#pragma once
#include "common.cuh"

namespace c2 {
// bases_hi: null, or a split MSM's second base array (msm.cuh: msm_impl).
int msm_g1(c2_status* st, stream_ctx* sc, const void* bases, bool bases_dev, const void* bases_hi, const void* scalars,
           bool scalars_dev, uint64_t n, int c, void* out, int* nwindows, int* used_c);
int msm_g2(c2_status* st, stream_ctx* sc, const void* bases, bool bases_dev, const void* bases_hi, const void* scalars,
           bool scalars_dev, uint64_t n, int c, void* out, int* nwindows, int* used_c);
int batch_add_g1(c2_status* st, stream_ctx* sc, const void* bases, bool bases_dev, const uint64_t* bitmap, uint64_t n,
                 void* out);
int batch_add_g2(c2_status* st, stream_ctx* sc, const void* bases, bool bases_dev, const uint64_t* bitmap, uint64_t n,
                 void* out);
int shift_g1(c2_status* st, stream_ctx* sc, void* dst, const void* src, uint64_t n, int k);
int shift_g2(c2_status* st, stream_ctx* sc, void* dst, const void* src, uint64_t n, int k);
int fill_g1(c2_status* st, stream_ctx* sc, void* dst, uint64_t n, const void* seeds, uint64_t k);
int fill_g2(c2_status* st, stream_ctx* sc, void* dst, uint64_t n, const void* seeds, uint64_t k);
}  // namespace c2
