package gadget

var sha256K = [64]uint32{
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
	0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
	0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
	0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
	0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
}

var sha256IV = [8]uint32{
	0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
}

// SHA256IV returns the SHA-256 initial hash value as constant words.
func SHA256IV() (iv [8]UInt32) {
	for i, x := range sha256IV {
		iv[i] = ConstUInt32(x)
	}
	return iv
}

// maybe is a word either known (concrete) or still a pending sum of up to 8
// words, as in bellperson's compression function.
type maybe struct {
	concrete bool
	u        UInt32
	ops      [8]UInt32
	n        int
}

func (cs *CS) compute(m *maybe, others ...*UInt32) UInt32 {
	if m.concrete {
		return m.u
	}
	var p [8]*UInt32
	for i := 0; i < m.n; i++ {
		p[i] = &m.ops[i]
	}
	n := m.n
	for _, o := range others {
		p[n] = o
		n++
	}
	return cs.addMany(p[:n]...)
}

// SHA256Compress runs the SHA-256 compression function on a 512-bit block
// (most significant bit of each word first) and the current hash value, as
// bellperson's sha256_compression_function: message-schedule and round
// additions are batched through MultiEq, whose last batch is flushed before
// returning. With the constant IV and an allocated block it costs 25,840
// constraints.
func (cs *CS) SHA256Compress(block []Bit, cur *[8]UInt32) [8]UInt32 {
	if len(block) != 512 {
		panic("gadget: SHA-256 block must be 512 bits")
	}
	var w [64]UInt32
	for i := 0; i < 16; i++ {
		w[i] = UInt32FromBitsBE(block[32*i : 32*i+32])
	}
	cs.multiEqBegin()
	for i := 16; i < 64; i++ {
		r := w[i-15].Rotr(7)
		t := w[i-15].Rotr(18)
		s0 := cs.XorUInt32(&r, &t)
		t = w[i-15].Shr(3)
		s0 = cs.XorUInt32(&s0, &t)
		r = w[i-2].Rotr(17)
		t = w[i-2].Rotr(19)
		s1 := cs.XorUInt32(&r, &t)
		t = w[i-2].Shr(10)
		s1 = cs.XorUInt32(&s1, &t)
		w[i] = cs.addMany(&w[i-16], &s0, &w[i-7], &s1)
	}

	a := maybe{concrete: true, u: cur[0]}
	b, c, d := cur[1], cur[2], cur[3]
	e := maybe{concrete: true, u: cur[4]}
	f, g, h := cur[5], cur[6], cur[7]
	for i := 0; i < 64; i++ {
		newE := cs.compute(&e)
		r := newE.Rotr(6)
		t := newE.Rotr(11)
		s1 := cs.XorUInt32(&r, &t)
		t = newE.Rotr(25)
		s1 = cs.XorUInt32(&s1, &t)
		ch := cs.Sha256ChUInt32(&newE, &f, &g)

		newA := cs.compute(&a)
		r = newA.Rotr(2)
		t = newA.Rotr(13)
		s0 := cs.XorUInt32(&r, &t)
		t = newA.Rotr(22)
		s0 = cs.XorUInt32(&s0, &t)
		maj := cs.Sha256MajUInt32(&newA, &b, &c)

		// temp1 = h + S1 + ch + k[i] + w[i]; temp2 = S0 + maj
		// e = temp1 + d, a = temp1 + temp2, both deferred.
		e.concrete, a.concrete = false, false
		e.ops[0], e.ops[1], e.ops[2], e.ops[3], e.ops[4] = h, s1, ch, ConstUInt32(sha256K[i]), w[i]
		a.ops[0], a.ops[1], a.ops[2], a.ops[3], a.ops[4] = e.ops[0], e.ops[1], e.ops[2], e.ops[3], e.ops[4]
		e.ops[5], e.n = d, 6
		a.ops[5], a.ops[6], a.n = s0, maj, 7

		h, g, f = g, f, newE
		d, c, b = c, b, newA
	}
	var out [8]UInt32
	out[0] = cs.compute(&a, &cur[0])
	out[1] = cs.addMany(&cur[1], &b)
	out[2] = cs.addMany(&cur[2], &c)
	out[3] = cs.addMany(&cur[3], &d)
	out[4] = cs.compute(&e, &cur[4])
	out[5] = cs.addMany(&cur[5], &f)
	out[6] = cs.addMany(&cur[6], &g)
	out[7] = cs.addMany(&cur[7], &h)
	cs.multiEqEnd()
	return out
}

// SHA256 hashes a message of whole bytes (bits most significant first) with
// padding, as bellperson's sha256 gadget, and appends the 256 digest bits,
// most significant first, to dst.
func (cs *CS) SHA256(dst, msg []Bit) []Bit {
	if len(msg)%8 != 0 {
		panic("gadget: SHA-256 message must be whole bytes")
	}
	l := uint64(len(msg))
	p := append(cs.pad[:0], msg...)
	p = append(p, bitTrue)
	for (len(p)+64)%512 != 0 {
		p = append(p, bitFalse)
	}
	for i := 63; i >= 0; i-- {
		p = append(p, Constant(l>>i&1 == 1))
	}
	cs.pad = p
	cur := SHA256IV()
	for k := 0; k < len(p); k += 512 {
		cur = cs.SHA256Compress(p[k:k+512], &cur)
	}
	for i := range cur {
		dst = cur[i].AppendBitsBE(dst)
	}
	return dst
}
