package gadget

// UInt64 is storage-proofs-core's UInt64: 64 bits, least significant first.
type UInt64 struct {
	Bits  [64]Bit
	Value uint64
}

// AllocUInt64 allocates the 64 bits of v, least significant first
// (UInt64::alloc).
func (cs *CS) AllocUInt64(v uint64) UInt64 {
	u := UInt64{Value: v}
	for i := range u.Bits {
		u.Bits[i] = cs.AllocBit(v>>i&1 == 1)
	}
	return u
}

// AppendBitsBE appends u's bits, most significant first (UInt64::to_bits_be).
func (u *UInt64) AppendBitsBE(dst []Bit) []Bit {
	for i := 63; i >= 0; i-- {
		dst = append(dst, u.Bits[i])
	}
	return dst
}

// PackUInt64IntoInput packs u into one public input (UInt64::pack_into_input).
func (cs *CS) PackUInt64IntoInput(u *UInt64) { cs.PackIntoInputs(u.Bits[:]) }
