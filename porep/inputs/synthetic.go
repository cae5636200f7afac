package inputs

import (
	"encoding/binary"
	"fmt"

	"golang.org/x/crypto/blake2b"
	"golang.org/x/crypto/chacha20"
)

// Synthetic PoRep (storage-proofs-porep challenges.rs, module synthetic).
// A sector's synthetic challenges are fixed at sealing time by its replica
// id and comm_r: number u is the 32-byte string at byte 32u of the
// generation stream, mapped to a node as every challenge is (toNode). The
// interactive seed later selects which of them the partitions prove.
const (
	synthMaxCount  = 1 << 18 // synthetic challenges of a sector: min(nodes, 2^18)
	synthNonce     = "synth-porep\x00"
	synthGenKey    = "filecoin.io|PoRep|1|Synthetic|1|Generation"
	synthSelectKey = "filecoin.io|PoRep|1|Synthetic|1|Selection"
)

// synthKey is the ChaCha20 key of a synthetic stream: BLAKE2b-256, keyed
// with domain, over a || b.
func synthKey(domain string, a, b [32]byte) ([]byte, error) {
	h, err := blake2b.New(32, []byte(domain))
	if err != nil {
		return nil, err
	}
	h.Write(a[:])
	h.Write(b[:])
	return h.Sum(nil), nil
}

// synthStream returns the ChaCha20 stream (IETF: 96-bit nonce, counter from
// 0) under key, positioned at byte offset.
func synthStream(key []byte, offset uint64) (*chacha20.Cipher, error) {
	c, err := chacha20.NewUnauthenticatedCipher(key, []byte(synthNonce))
	if err != nil {
		return nil, err
	}
	if offset/64 >= 1<<32 {
		return nil, fmt.Errorf("%w: synthetic stream offset %d", ErrShape, offset)
	}
	c.SetCounter(uint32(offset / 64))
	skip := make([]byte, offset%64)
	c.XORKeyStream(skip, skip)
	return c, nil
}

// synthChallenges fills out with the synthetic challenges that seed selects
// for challenge numbers j0, j0+1, ... of a sector of nodes nodes.
func synthChallenges(nodes uint64, replicaID, commR, seed [32]byte, j0 uint32, out []uint64) ([]uint64, error) {
	count := min(nodes, synthMaxCount)
	selKey, err := synthKey(synthSelectKey, replicaID, seed)
	if err != nil {
		return nil, err
	}
	genKey, err := synthKey(synthGenKey, replicaID, commR)
	if err != nil {
		return nil, err
	}
	sel, err := synthStream(selKey, 4*uint64(j0))
	if err != nil {
		return nil, err
	}
	idx := make([]byte, 4*len(out))
	sel.XORKeyStream(idx, idx)
	for i := range out {
		u := uint64(binary.LittleEndian.Uint32(idx[4*i:])) % count
		gen, err := synthStream(genKey, 32*u)
		if err != nil {
			return nil, err
		}
		var x [32]byte
		gen.XORKeyStream(x[:], x[:])
		out[i] = toNode(x, nodes)
	}
	return out, nil
}
