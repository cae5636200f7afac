// C2_MSM_ENTRIES(g, F, max_c) defines, inside namespace c2, the entry points
// msm_<g>, batch_add_<g>, shift_<g> and fill_<g> that msm_entry.h declares,
// for the group g (g1, g2) over the coordinate field F (fp_t, fp2_t): they
// cast the opaque pointers to <g>_affine and <g>_xyzz and call the msm.cuh
// templates; max_c is msm_impl's largest window (plain layout). Each group's
// instantiation lives in its own translation unit (msm_g1.cu, msm_g2.cu) so
// that the two build in parallel.
#pragma once
#include "msm.cuh"
#include "msm_entry.h"

#define C2_MSM_ENTRIES(g, F, max_c)                                                                                  \
    int msm_##g(c2_status* st, stream_ctx* sc, const void* bases, bool bases_dev, const void* bases_hi,               \
                const void* scalars, bool scalars_dev, uint64_t n, int c, void* out, int* nwindows, int* used_c) {   \
        return msm_impl<F>(st, sc, (const g##_affine*)bases, bases_dev, (const fr_t*)scalars, scalars_dev, n, c,      \
                           (g##_xyzz*)out, nwindows, used_c, max_c, (const g##_affine*)bases_hi);                     \
    }                                                                                                                 \
    int shift_##g(c2_status* st, stream_ctx* sc, void* dst, const void* src, uint64_t n, int k) {                     \
        return shift_impl<F>(st, sc, (g##_affine*)dst, (const g##_affine*)src, n, k);                                 \
    }                                                                                                                 \
    int batch_add_##g(c2_status* st, stream_ctx* sc, const void* bases, bool bases_dev, const uint64_t* bitmap,       \
                      uint64_t n, void* out) {                                                                        \
        return batch_add_impl<F>(st, sc, (const g##_affine*)bases, bases_dev, bitmap, n, (g##_xyzz*)out);            \
    }                                                                                                                 \
    int fill_##g(c2_status* st, stream_ctx* sc, void* dst, uint64_t n, const void* seeds, uint64_t k) {               \
        return fill_impl<F>(st, sc, (g##_affine*)dst, n, (const g##_affine*)seeds, k);                                \
    }
