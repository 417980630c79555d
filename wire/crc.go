package wire

// CRC-32C of a concatenation from the CRCs of its pieces. A frame's payload
// is a message's small fields around large blobs whose CRCs the sender
// already took (a shard entry's, when it was cut); the frame's CRC is then
// combined from those, in place of a second pass over the blobs' bytes.
//
// The CRCs here are as hash/crc32 computes them. For A then B,
// CRC(A‖B) = CRC(A)·x^(8·len(B)) ⊕ CRC(B) in GF(2)[x] modulo the
// polynomial: the initial and final inversions cancel out. The polynomials
// are reflected, as in the table: bit 31 is x⁰.

// castagnoliPoly is the CRC-32C polynomial, reflected.
const castagnoliPoly = 0x82f63b78

// mulMod returns a·b modulo the polynomial.
func mulMod(a, b uint32) uint32 {
	var p uint32
	for m := uint32(1) << 31; m != 0; m >>= 1 {
		if a&m != 0 {
			p ^= b
		}
		b = b>>1 ^ castagnoliPoly&-(b&1) // b·x
	}
	return p
}

// xPow2 holds x^(2^k) modulo the polynomial.
var xPow2 = func() (t [64]uint32) {
	t[0] = 1 << 30 // x¹
	for k := 1; k < len(t); k++ {
		t[k] = mulMod(t[k-1], t[k-1])
	}
	return t
}()

// shiftBytes returns x^(8n) modulo the polynomial.
func shiftBytes(n uint64) uint32 {
	p := uint32(1) << 31 // x⁰
	for k := 3; n != 0; k, n = k+1, n>>1 {
		if n&1 != 0 {
			p = mulMod(p, xPow2[k])
		}
	}
	return p
}

// CombineCRC returns the CRC-32C of A‖B, given a = CRC-32C(A), b =
// CRC-32C(B) and lenB = len(B).
func CombineCRC(a, b uint32, lenB int) uint32 {
	return mulMod(a, shiftBytes(uint64(lenB))) ^ b
}
