package serve

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/sealc2/c2"
	"github.com/sealc2/c2/porep"
	"github.com/sealc2/c2/post"
	pb "github.com/sealc2/c2/serve/cuzkpb"
	"github.com/sealc2/c2/update"
)

// The request fields of each proof kind, as Curio's cuzk client fills them
// (lib/ffi/cuzk_funcs.go) and cuzk reads them:
//
//   - POREP_SEAL_COMMIT: vanilla_proof is the C1 output, raw or in the
//     {SectorNum, Phase1Out, SectorSize} envelope. The C1 names its own
//     registered proof; registered_proof is not read.
//   - SNAP_DEALS_UPDATE: registered_proof is an abi.RegisteredUpdateProof
//     (0-4: StackedDrg2KiBV1 … StackedDrg64GiBV1); vanilla_proofs holds one
//     vanilla partition proof per partition, in order, each the bincode
//     bytes filecoin-ffi's GenerateUpdateVanillaProofs returns (a serde
//     JSON object is accepted too); comm_r_old, comm_r_new and comm_d_new
//     are the raw 32-byte commitments (the sector key's sealed CID, the new
//     sealed and unsealed CIDs, digests only).
//   - WINDOW_POST_PARTITION: registered_proof is an abi.RegisteredPoStProof
//     of a Window PoSt (5-9: V1; 10-14: Go's V1_1, filecoin-proofs'
//     V1_2); vanilla_proofs holds the vanilla proofs of the partition's
//     sectors, in order, each as GenerateSingleVanillaProof returns it
//     (bincode FallbackPoStSectorProof, or its serde JSON);
//     partition_index is the partition's place in the deadline's proof
//     (V1 derives the sectors' challenges from it; a Prover without
//     ProveWindowPoStPartition proves V1 partition 0 only); randomness is
//     the 32-byte challenge seed (Curio clears its top two bits, so that
//     it is a canonical scalar). The answer is the one partition's
//     192-byte proof, as generate_single_window_post_with_vanilla returns
//     it.
//   - WINNING_POST: registered_proof is a Winning PoSt proof (0-4);
//     vanilla_proofs holds the one challenged sector's vanilla proof;
//     randomness as for Window PoSt.
//
// miner_id and sector_number name the job in Curio's request ids and are
// not needed to prove. sector_size, when not 0, must be the registered
// proof's.

// postProver is implemented by provers of Window and Winning PoSt, as
// *c2.Prover is.
type postProver interface {
	ProveWindowPoSt(ctx context.Context, proof string, randomness [32]byte, vanilla [][]byte) ([]byte, error)
	ProveWinningPoSt(ctx context.Context, proof string, randomness [32]byte, vanilla [][]byte) ([]byte, error)
}

// updateProver is implemented by provers of SnapDeals updates, as
// *c2.Prover is.
type updateProver interface {
	ProveUpdate(ctx context.Context, proof string, comms c2.UpdateCommitments, vanilla [][]byte) ([]byte, error)
}

// timedPoStProver is implemented by PoSt provers that time one call's
// stages, as *c2.Prover does; the engine then proves PoSt jobs with these
// and fills their timings as for PoRep.
type timedPoStProver interface {
	ProveWindowPoStTimed(ctx context.Context, proof string, randomness [32]byte, vanilla [][]byte) ([]byte, c2.ProveTimes, error)
	ProveWinningPoStTimed(ctx context.Context, proof string, randomness [32]byte, vanilla [][]byte) ([]byte, c2.ProveTimes, error)
}

// partitionProver is implemented by provers of one Window PoSt partition
// at its place in the whole proof, as *c2.Prover is; the engine then
// proves WINDOW_POST_PARTITION jobs with it (with the timed variant when
// the prover has it), V1 past partition 0 included.
type partitionProver interface {
	ProveWindowPoStPartition(ctx context.Context, proof string, randomness [32]byte, partition int, vanilla [][]byte) ([]byte, error)
}

// timedPartitionProver is partitionProver with the call's stage times.
type timedPartitionProver interface {
	ProveWindowPoStPartitionTimed(ctx context.Context, proof string, randomness [32]byte, partition int, vanilla [][]byte) ([]byte, c2.ProveTimes, error)
}

// timedUpdateProver is implemented by SnapDeals provers that time one
// call's stages, as *c2.Prover does.
type timedUpdateProver interface {
	ProveUpdateTimed(ctx context.Context, proof string, comms c2.UpdateCommitments, vanilla [][]byte) ([]byte, c2.ProveTimes, error)
}

// allKinds are the proof kinds of the protocol, in enum order.
var allKinds = []pb.ProofKind{pb.ProofKind_POREP_SEAL_COMMIT, pb.ProofKind_SNAP_DEALS_UPDATE,
	pb.ProofKind_WINDOW_POST_PARTITION, pb.ProofKind_WINNING_POST}

// supports reports whether p proves kind.
func supports(p Prover, kind pb.ProofKind) bool {
	switch kind {
	case pb.ProofKind_POREP_SEAL_COMMIT:
		return true
	case pb.ProofKind_SNAP_DEALS_UPDATE:
		_, ok := p.(updateProver)
		return ok
	case pb.ProofKind_WINDOW_POST_PARTITION, pb.ProofKind_WINNING_POST:
		_, ok := p.(postProver)
		return ok
	}
	return false
}

// kindKey names a proof kind in the configuration (job_timeout) and in
// circuit ids, as cuzk names its circuits: "porep", "snap", "wpost",
// "winning".
func kindKey(k pb.ProofKind) string {
	switch k {
	case pb.ProofKind_POREP_SEAL_COMMIT:
		return "porep"
	case pb.ProofKind_SNAP_DEALS_UPDATE:
		return "snap"
	case pb.ProofKind_WINDOW_POST_PARTITION:
		return "wpost"
	case pb.ProofKind_WINNING_POST:
		return "winning"
	}
	return ""
}

// kindByKey is the inverse of kindKey.
func kindByKey(key string) (pb.ProofKind, bool) {
	for _, k := range allKinds {
		if kindKey(k) == key {
			return k, true
		}
	}
	return 0, false
}

// sectorSizes are the registered sector sizes in the order of the
// registered proof numbers, with the names filecoin-proofs and cuzk give
// them.
var sectorSizes = []struct {
	size     uint64
	name, id string
}{
	{2 << 10, "2KiB", "2k"}, {8 << 20, "8MiB", "8m"}, {512 << 20, "512MiB", "512m"},
	{32 << 30, "32GiB", "32g"}, {64 << 30, "64GiB", "64g"},
}

// sizeID is cuzk's suffix of a sector size in circuit ids ("32g"), "" for
// an unregistered size.
func sizeID(size uint64) string {
	for _, s := range sectorSizes {
		if s.size == size {
			return s.id
		}
	}
	return ""
}

// postShapeOf returns the PoSt shape of an abi.RegisteredPoStProof number:
// 0-4 Winning V1, 5-9 Window V1, 10-14 Window V1_1 (filecoin-proofs'
// StackedDrgWindow…V1_2, the same circuit with grinding-proof challenges).
func postShapeOf(v uint64) (post.Shape, bool) {
	if v >= 15 {
		return post.Shape{}, false
	}
	size := sectorSizes[v%5].name
	var name string
	switch v / 5 {
	case 0:
		name = "StackedDrgWinning" + size + "V1"
	case 1:
		name = "StackedDrgWindow" + size + "V1"
	default:
		name = "StackedDrgWindow" + size + "V1_2"
	}
	return post.ShapeByName(name)
}

// updateShapeOf returns the SnapDeals shape of an abi.RegisteredUpdateProof
// number (0-4).
func updateShapeOf(v uint64) (update.Shape, bool) {
	if v >= 5 {
		return update.Shape{}, false
	}
	return update.ShapeByName("StackedDrg" + sectorSizes[v].name + "V1")
}

// RegisteredProof returns the registered_proof number that names the
// registered proof called name in a request of kind: an
// abi.RegisteredPoStProof for WINDOW_POST_PARTITION and WINNING_POST
// (Window V1_2 is 10-14), an abi.RegisteredUpdateProof for
// SNAP_DEALS_UPDATE. PoRep requests carry no number (the C1 names its
// proof). Errors are *FieldError values on "registered_proof".
func RegisteredProof(kind pb.ProofKind, name string) (uint64, error) {
	for v := uint64(0); v < 15; v++ {
		switch kind {
		case pb.ProofKind_WINDOW_POST_PARTITION, pb.ProofKind_WINNING_POST:
			if s, ok := postShapeOf(v); ok && s.Name == name && (s.Kind == post.Winning) == (kind == pb.ProofKind_WINNING_POST) {
				return v, nil
			}
		case pb.ProofKind_SNAP_DEALS_UPDATE:
			if s, ok := updateShapeOf(v); ok && s.Name == name {
				return v, nil
			}
		default:
			return 0, fieldErr("registered_proof", "%v requests carry no registered proof number", kind)
		}
	}
	return 0, fieldErr("registered_proof", "%q is no registered proof of a %v request", name, kind)
}

// FieldError reports a request field that cannot be proved as given; the
// service answers it with InvalidArgument. Field is the request's field
// name, e.g. "comm_r_old" or "vanilla_proofs[2]".
type FieldError struct {
	Field string
	Msg   string
}

func (e *FieldError) Error() string { return fmt.Sprintf("serve: %s: %s", e.Field, e.Msg) }

func fieldErr(field, format string, a ...any) error {
	return &FieldError{Field: field, Msg: fmt.Sprintf(format, a...)}
}

// task is the work of one job, taken from its request by parse: what the
// Prover method of its kind is called with.
type task struct {
	kind    pb.ProofKind
	circuit string // e.g. "porep-32g", "wpost-32g"; "" when unknown

	c1 []byte // POREP_SEAL_COMMIT

	proof      string // the registered proof's name (PoSt, SnapDeals)
	partition  int    // WINDOW_POST_PARTITION: partition_index
	randomness [32]byte
	comms      c2.UpdateCommitments
	vanilla    [][]byte
}

// parse checks req's fields for its kind and returns its task. Refusals are
// *FieldError values (InvalidArgument), or wrap ErrUnsupportedKind for a
// request c2 cannot prove (Unimplemented). The vanilla proofs of PoSt and
// SnapDeals requests are decoded here, so that one that cannot be decoded
// is refused at once with its place named; the native checks of what they
// prove run in the job (a failure ends it FAILED).
func parse(req *pb.SubmitProofRequest, p Prover) (*task, error) {
	kind := req.GetProofKind()
	switch kind {
	case pb.ProofKind_POREP_SEAL_COMMIT, pb.ProofKind_SNAP_DEALS_UPDATE,
		pb.ProofKind_WINDOW_POST_PARTITION, pb.ProofKind_WINNING_POST:
	default:
		return nil, fieldErr("proof_kind", "%v is no proof kind", kind)
	}
	if !supports(p, kind) {
		return nil, fmt.Errorf("%w: %v (the prover has no method for it)", ErrUnsupportedKind, kind)
	}
	t := &task{kind: kind}
	switch kind {
	case pb.ProofKind_POREP_SEAL_COMMIT:
		if len(req.GetVanillaProof()) == 0 {
			return nil, fieldErr("vanilla_proof", "empty (POREP_SEAL_COMMIT needs the C1 output)")
		}
		if n := len(req.GetVanillaProof()); n > porep.MaxC1Size {
			return nil, fieldErr("vanilla_proof", "%d bytes, more than the %d a C1 output may have", n, porep.MaxC1Size)
		}
		t.c1 = req.GetVanillaProof()
		t.circuit = circuitID(req.GetSectorSize())
		return t, nil
	case pb.ProofKind_SNAP_DEALS_UPDATE:
		return t, t.parseUpdate(req)
	}
	return t, t.parsePoSt(req, p)
}

// checkSize refuses a sector_size that is not the registered proof's.
func checkSize(req *pb.SubmitProofRequest, name string, size uint64) error {
	if s := req.GetSectorSize(); s != 0 && s != size {
		return fieldErr("sector_size", "%d, but registered_proof %d (%s) proves %d-byte sectors", s, req.GetRegisteredProof(), name, size)
	}
	return nil
}

// scalar32 copies a 32-byte field that must be a canonical scalar
// (little-endian) into dst.
func scalar32(field string, b []byte, dst *[32]byte) error {
	if len(b) != 32 {
		return fieldErr(field, "%d bytes, want 32", len(b))
	}
	copy(dst[:], b)
	if _, err := fr.LittleEndian.Element(dst); err != nil {
		return fieldErr(field, "not a canonical field element (little-endian, below the BLS12-381 scalar modulus)")
	}
	return nil
}

// checkVanillaSizes refuses an empty vanilla proof or one over limit bytes.
func checkVanillaSizes(vanilla [][]byte, limit int) error {
	for i, b := range vanilla {
		switch {
		case len(b) == 0:
			return fieldErr(fmt.Sprintf("vanilla_proofs[%d]", i), "empty")
		case len(b) > limit:
			return fieldErr(fmt.Sprintf("vanilla_proofs[%d]", i), "%d bytes, more than the %d a vanilla proof may have", len(b), limit)
		}
	}
	return nil
}

func (t *task) parsePoSt(req *pb.SubmitProofRequest, p Prover) error {
	rp := req.GetRegisteredProof()
	shape, ok := postShapeOf(rp)
	if !ok {
		return fieldErr("registered_proof", "%d is no registered PoSt proof (0-4 Winning, 5-14 Window)", rp)
	}
	want, wantRange := post.Window, "5-14"
	if t.kind == pb.ProofKind_WINNING_POST {
		want, wantRange = post.Winning, "0-4"
	}
	if shape.Kind != want {
		return fieldErr("registered_proof", "%d is %s, a %s PoSt proof; %v takes a %s one (%s)", rp, shape.Name, shape.Kind, t.kind, want, wantRange)
	}
	if err := checkSize(req, shape.Name, shape.SectorSize); err != nil {
		return err
	}
	t.proof = shape.Name
	t.circuit = kindKey(t.kind) + "-" + sizeID(shape.SectorSize)
	if err := scalar32("randomness", req.GetRandomness(), &t.randomness); err != nil {
		return err
	}
	t.vanilla = req.GetVanillaProofs()
	n := len(t.vanilla)
	switch {
	case n == 0:
		return fieldErr("vanilla_proofs", "empty (%v needs one vanilla proof per sector)", t.kind)
	case t.kind == pb.ProofKind_WINNING_POST && n != 1:
		return fieldErr("vanilla_proofs", "%d vanilla proofs; Winning PoSt proves the one challenged sector", n)
	case t.kind == pb.ProofKind_WINDOW_POST_PARTITION && n > shape.Sectors:
		return fieldErr("vanilla_proofs", "%d sectors; a partition of %s holds at most %d", n, shape.Name, shape.Sectors)
	}
	if t.kind == pb.ProofKind_WINDOW_POST_PARTITION {
		pi := req.GetPartitionIndex()
		_, byIndex := p.(partitionProver)
		switch {
		case byIndex && uint64(pi)*uint64(shape.Sectors) > c2.MaxPoStOffset:
			return fieldErr("partition_index", "%d: more than %d sectors of %s before it", pi, c2.MaxPoStOffset, shape.Name)
		case !byIndex && shape.Version == post.V1_0_0 && pi > 0:
			// V1 derives a sector's challenges from its place in the whole
			// proof, which ProveWindowPoSt counts from partition 0.
			return fmt.Errorf("%w: %s partition %d (this prover proves V1 Window PoSt from partition 0 only; networks since v19 use V1_1, registered_proof 10-14)",
				ErrUnsupportedKind, shape.Name, pi)
		}
		t.partition = int(pi)
	}
	if err := checkVanillaSizes(t.vanilla, post.MaxSectorProofSize); err != nil {
		return err
	}
	proofs, err := c2.DecodeVanillaPoSt(t.vanilla)
	if err != nil {
		return vanillaFieldErr(err)
	}
	if _, _, err := post.Partitions(shape, proofs); err != nil {
		return vanillaFieldErr(err)
	}
	return nil
}

func (t *task) parseUpdate(req *pb.SubmitProofRequest) error {
	rp := req.GetRegisteredProof()
	shape, ok := updateShapeOf(rp)
	if !ok {
		return fieldErr("registered_proof", "%d is no registered update proof (0-4)", rp)
	}
	if err := checkSize(req, shape.Name, shape.SectorSize); err != nil {
		return err
	}
	t.proof = shape.Name
	t.circuit = kindKey(t.kind) + "-" + sizeID(shape.SectorSize)
	for _, c := range []struct {
		name string
		b    []byte
		dst  *[32]byte
	}{
		{"comm_r_old", req.GetCommROld(), &t.comms.CommROld},
		{"comm_r_new", req.GetCommRNew(), &t.comms.CommRNew},
		{"comm_d_new", req.GetCommDNew(), &t.comms.CommDNew},
	} {
		if err := scalar32(c.name, c.b, c.dst); err != nil {
			return err
		}
	}
	t.vanilla = req.GetVanillaProofs()
	if n := len(t.vanilla); n != shape.Partitions {
		return fieldErr("vanilla_proofs", "%d partition proofs; %s has %d partitions", n, shape.Name, shape.Partitions)
	}
	if err := checkVanillaSizes(t.vanilla, update.MaxPartitionProofSize); err != nil {
		return err
	}
	if _, err := c2.DecodeVanillaUpdate(t.vanilla); err != nil {
		return vanillaFieldErr(err)
	}
	return nil
}

// vanillaFieldErr turns a decoding error of the vanilla proofs into a
// *FieldError naming the proof: "vanilla_proofs[2].vanilla_proof.sectors[0]…".
func vanillaFieldErr(err error) error {
	var pe *post.VanillaError
	var ue *update.VanillaError
	var field string
	var cause error
	switch {
	case errors.As(err, &pe):
		field, cause = pe.Field, pe.Err
	case errors.As(err, &ue):
		field, cause = ue.Field, ue.Err
	default:
		return fieldErr("vanilla_proofs", "%v", err)
	}
	if cause == nil {
		cause = err
	}
	if field != "" && field[0] != '[' {
		field = "." + field
	}
	return fieldErr("vanilla_proofs"+field, "%v", cause)
}

// prove runs t on p. times are the call's own stage times when the prover
// reports them (ProveTimed, ProveUpdateTimed,
// ProveWindowPoStPartitionTimed or ProveWindowPoStTimed,
// ProveWinningPoStTimed), else nil.
func (t *task) prove(ctx context.Context, p Prover) ([]byte, *c2.ProveTimes, error) {
	timed := func(proof []byte, tm c2.ProveTimes, err error) ([]byte, *c2.ProveTimes, error) {
		return proof, &tm, err
	}
	untimed := func(proof []byte, err error) ([]byte, *c2.ProveTimes, error) { return proof, nil, err }
	switch t.kind {
	case pb.ProofKind_POREP_SEAL_COMMIT:
		if tp, ok := p.(timedProver); ok {
			return timed(tp.ProveTimed(ctx, t.c1))
		}
		return untimed(p.Prove(ctx, t.c1))
	case pb.ProofKind_SNAP_DEALS_UPDATE:
		if tp, ok := p.(timedUpdateProver); ok {
			return timed(tp.ProveUpdateTimed(ctx, t.proof, t.comms, t.vanilla))
		}
		if up, ok := p.(updateProver); ok {
			return untimed(up.ProveUpdate(ctx, t.proof, t.comms, t.vanilla))
		}
	case pb.ProofKind_WINDOW_POST_PARTITION:
		if tp, ok := p.(timedPartitionProver); ok {
			return timed(tp.ProveWindowPoStPartitionTimed(ctx, t.proof, t.randomness, t.partition, t.vanilla))
		}
		if pp, ok := p.(partitionProver); ok {
			return untimed(pp.ProveWindowPoStPartition(ctx, t.proof, t.randomness, t.partition, t.vanilla))
		}
		if tp, ok := p.(timedPoStProver); ok {
			return timed(tp.ProveWindowPoStTimed(ctx, t.proof, t.randomness, t.vanilla))
		}
		if pp, ok := p.(postProver); ok {
			return untimed(pp.ProveWindowPoSt(ctx, t.proof, t.randomness, t.vanilla))
		}
	case pb.ProofKind_WINNING_POST:
		if tp, ok := p.(timedPoStProver); ok {
			return timed(tp.ProveWinningPoStTimed(ctx, t.proof, t.randomness, t.vanilla))
		}
		if pp, ok := p.(postProver); ok {
			return untimed(pp.ProveWinningPoSt(ctx, t.proof, t.randomness, t.vanilla))
		}
	}
	// The prover was replaced (EvictSRS with Options.Reopen) by one that
	// lacks the method.
	return nil, nil, fmt.Errorf("%w: %v", ErrUnsupportedKind, t.kind)
}

// timeoutOf is the configured deadline of kind's jobs, 0 for none.
func (o Options) timeoutOf(kind pb.ProofKind) time.Duration {
	return o.Timeouts[kind]
}
