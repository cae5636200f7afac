package msm

import (
	"fmt"
	"runtime"
	"sync"

	"github.com/consensys/gnark-crypto/ecc"
	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// sumChunks runs f over [0, words) split into about tasks ranges.
func sumChunks[J any](words, tasks int, f func(lo, hi int) J) []J {
	if tasks <= 0 {
		tasks = runtime.GOMAXPROCS(0)
	}
	tasks = min(tasks, max(1, words/64)) // at least 4096 bases per task
	out := make([]J, tasks)
	var wg sync.WaitGroup
	for t := 0; t < tasks; t++ {
		lo, hi := words*t/tasks, words*(t+1)/tasks
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[t] = f(lo, hi)
		}()
	}
	wg.Wait()
	return out
}

// G1 returns Σ scalar_i·bases[i] for the query classified by sp: the sum of
// the unit-scalar bases plus an MSM over the tail. len(bases) must be sp.N.
func G1(bases []bls.G1Affine, sp *Split, tasks int) (bls.G1Jac, error) {
	return groupG1.split(bases, sp, tasks)
}

// G2 is G1 over G2.
func G2(bases []bls.G2Affine, sp *Split, tasks int) (bls.G2Jac, error) {
	return groupG2.split(bases, sp, tasks)
}

func (g group[A, F, J, PA, PF, PJ]) split(bases []A, sp *Split, tasks int) (J, error) {
	var res J
	if len(bases) != sp.N {
		return res, fmt.Errorf("msm: %s query has %d bases, split expects %d", g.name, len(bases), sp.N)
	}
	res = g.sum(bases, sp.Ones, tasks)
	if len(sp.Tail) == 0 {
		return res, nil
	}
	var tail J
	if _, err := PJ(&tail).MultiExp(Gather(bases, sp.TailIdx), sp.Tail, ecc.MultiExpConfig{NbTasks: tasks}); err != nil {
		return res, fmt.Errorf("msm: %s tail: %w", g.name, err)
	}
	PJ(&res).AddAssign(&tail)
	return res, nil
}

// DenseG1 returns Σ scalars[i]·bases[i] with gnark-crypto's MSM; for dense
// scalars such as h. The lengths must be equal.
func DenseG1(bases []bls.G1Affine, scalars []fr.Element, tasks int) (bls.G1Jac, error) {
	var res bls.G1Jac
	if len(bases) != len(scalars) {
		return res, fmt.Errorf("msm: %d bases for %d scalars", len(bases), len(scalars))
	}
	if len(bases) == 0 {
		return res, nil
	}
	if _, err := res.MultiExp(bases, scalars, ecc.MultiExpConfig{NbTasks: tasks}); err != nil {
		return res, fmt.Errorf("msm: %w", err)
	}
	return res, nil
}
