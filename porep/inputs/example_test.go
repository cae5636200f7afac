package inputs_test

import (
	"fmt"

	"github.com/sealc2/c2/porep/inputs"
)

func ExamplePartition() {
	p, _ := inputs.ParseProof("StackedDrg32GiBV1_1")
	s, _ := p.Shape()
	var proverID, ticket, commD, commR, seed [32]byte // from the chain in practice
	replicaID := inputs.ReplicaID(proverID, 42, ticket, commD, p.PoRepID())
	for k := range s.Partitions {
		in, err := inputs.Partition(s, replicaID, commD, commR, seed, p.PoRepID(), k)
		if err != nil {
			fmt.Println(err)
			return
		}
		if k == 0 {
			fmt.Println(s.Partitions, "partitions of", len(in), "inputs (plus ONE)")
		}
	}
	// Output: 10 partitions of 327 inputs (plus ONE)
}
