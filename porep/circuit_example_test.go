package porep_test

import (
	"encoding/hex"
	"fmt"
	"log"
	"os"

	"github.com/sealc2/c2/porep"
	"github.com/sealc2/c2/r1cs"
)

// The shape of a sector size fixes its circuit: path lengths, public inputs
// and the official parameter files.
func ExampleShape() {
	s, _ := porep.ShapeBySize(32 << 30)
	fmt.Println(s.Name, s.Partitions, "partitions of", s.Challenges, "challenges")
	fmt.Println("tree D levels:", s.DataPathLen(), "tree C/R arities:", s.TreeArities())
	fmt.Println("public inputs:", s.NumInputs())
	fmt.Println(s.ParamsName() + ".params")
	// Output:
	// StackedDrg32GiBV1 10 partitions of 18 challenges
	// tree D levels: 30 tree C/R arities: [8 8 8 8 8 8 8 8 8 8]
	// public inputs: 328
	// v28-stacked-proof-of-replication-merkletree-poseidon_hasher-8-8-0-sha256_hasher-82a357d2f2ca81dc61bb45f4a762807aedee1b0a53fd6c4e77b46a01bfef7820.params
}

// Decode a C1 output, take its partitions, and count the constraints of the
// first one without storing them.
func ExampleSynthesize() {
	shape, parts := refgenPartitions()
	cnt := r1cs.NewCounter()
	if err := porep.Synthesize(cnt, shape, parts[0]); err != nil {
		log.Fatal(err)
	}
	cnt.Finalize()
	fmt.Println(shape.Name, len(parts), "partition")
	fmt.Println(cnt.Counts())
	// Output:
	// StackedDrg2KiBV1 1 partition
	// constraints=2687961 inputs=40 aux=2685673 a_aux=2674908 b_inputs=1 b_aux=685521
}

// Compute the witness of a partition on all cores; its digest equals the
// one rust-fil-proofs' circuit produces (testdata/refgen meta.json).
func ExampleWitness() {
	shape, parts := refgenPartitions()
	w, err := porep.Witness(shape, parts[0], 0)
	if err != nil {
		log.Fatal(err)
	}
	d := r1cs.WitnessDigest(w.Inputs, w.Aux)
	fmt.Println(len(w.Inputs), len(w.Aux), hex.EncodeToString(d[:]))
	// Output:
	// 40 2685673 cc87897f38c04da130201c39032dd585eb27ccd697fc079b4e6ea8a6fb570e05
}

// refgenPartitions decodes the 2 KiB C1 output of testdata/refgen and
// returns its shape and partitions.
func refgenPartitions() (porep.Shape, []*porep.Partition) {
	b, err := os.ReadFile("../testdata/refgen/out/porep-2k/c1.json")
	if err != nil {
		log.Fatal(err)
	}
	c1, err := porep.DecodeC1(b)
	if err != nil {
		log.Fatal(err)
	}
	shape, parts, err := porep.Partitions(c1)
	if err != nil {
		log.Fatal(err)
	}
	return shape, parts
}
