// C entry points for MSM, batch addition and point filling (G1 and G2).
#include "msm_entry.h"

using namespace c2;

static int check_group(c2_status* st, int group) {
    if (group != 1 && group != 2) return set_status(st, C2_ERR_INVALID, 0, "group %d is not 1 or 2", group);
    return C2_OK;
}

extern "C" {

int c2_msm(c2_status* st, c2_stream* h, int group, const void* bases, int bases_on_device, const void* scalars,
           int scalars_on_device, uint64_t n, int window_bits, void* out, int* nwindows, int* used_window_bits) {
    stream_ctx* sc = (stream_ctx*)h;
    if (!sc || !out || !nwindows || !used_window_bits || (n && (!bases || !scalars)))
        return set_status(st, C2_ERR_INVALID, 0, "c2_msm: null argument");
    if (int rc = check_group(st, group)) return rc;
    C2_ENTER(sc->ordinal);
    int rc;
    if (group == 1)
        rc = msm_g1(st, sc, bases, bases_on_device, scalars, scalars_on_device, n, window_bits, out, nwindows,
                    used_window_bits);
    else
        rc = msm_g2(st, sc, bases, bases_on_device, scalars, scalars_on_device, n, window_bits, out, nwindows,
                    used_window_bits);
    if (rc) cudaStreamSynchronize(sc->s);
    return rc;
}

int c2_batch_add(c2_status* st, c2_stream* h, int group, const void* bases, int bases_on_device,
                 const uint64_t* bitmap, uint64_t n, void* out) {
    stream_ctx* sc = (stream_ctx*)h;
    if (!sc || !out || (n && (!bases || !bitmap))) return set_status(st, C2_ERR_INVALID, 0, "c2_batch_add: null argument");
    if (int rc = check_group(st, group)) return rc;
    C2_ENTER(sc->ordinal);
    int rc;
    if (group == 1)
        rc = batch_add_g1(st, sc, bases, bases_on_device, bitmap, n, out);
    else
        rc = batch_add_g2(st, sc, bases, bases_on_device, bitmap, n, out);
    if (rc) cudaStreamSynchronize(sc->s);
    return rc;
}

int c2_fill_points(c2_status* st, c2_stream* h, int group, void* dst, uint64_t n, const void* seeds, uint64_t k) {
    stream_ctx* sc = (stream_ctx*)h;
    if (!sc || !dst || !seeds) return set_status(st, C2_ERR_INVALID, 0, "c2_fill_points: null argument");
    if (int rc = check_group(st, group)) return rc;
    C2_ENTER(sc->ordinal);
    int rc;
    if (group == 1)
        rc = fill_g1(st, sc, dst, n, seeds, k);
    else
        rc = fill_g2(st, sc, dst, n, seeds, k);
    if (rc) cudaStreamSynchronize(sc->s);
    return rc;
}

}  // extern "C"
