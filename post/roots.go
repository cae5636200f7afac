package post

import "fmt"

// CheckRoots reports whether every inclusion proof of every vanilla sector
// carries comm_r_last as its root. The circuit never reads those roots,
// and [Shape.VerifyPartition] ties the paths to comm_r_last itself, but
// storage-proofs-post's verify_all_partitions refuses a proof whose roots
// differ from one another (it takes comm_r_last from the first): checking
// them keeps c2 from proving what rust-fil-proofs rejects. Errors are
// *InputError values naming the proof, e.g.
// "[1].vanilla_proof.sectors[0].inclusion_proofs[4].root".
func CheckRoots(proofs []SectorProof) error {
	for i := range proofs {
		for j := range proofs[i].Sectors {
			v := &proofs[i].Sectors[j]
			for c := range v.InclusionProofs {
				if v.InclusionProofs[c].Root != v.CommRLast {
					return &InputError{fmt.Sprintf("[%d].vanilla_proof.sectors[%d].inclusion_proofs[%d].root", i, j, c),
						"differs from comm_r_last"}
				}
			}
		}
	}
	return nil
}
