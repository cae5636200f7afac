// Command c2 produces and checks Filecoin Groth16 (BLS12-381) proofs: PoRep
// C2, Window and Winning PoSt, and SnapDeals updates.
//
//	c2 demo          prove an embedded 2 KiB sector's C1 output (development parameters)
//	c2 prove         prove a C1 output with a sector size's parameters
//	c2 post-prove    prove a Window or Winning PoSt from per-sector vanilla proofs
//	c2 update-prove  prove a SnapDeals update from its vanilla partition proofs
//	c2 verify        verify a proof file against a .vk/.params file and public inputs
//	c2 setup         generate INSECURE development parameters (PoRep, PoSt, SnapDeals)
//	c2 c1gen         write a synthetic but valid C1 output for a sector size
//	c2 bench         run synthetic partitions or C1s through the pipeline
//	c2 serve         run a proving daemon speaking Curio's cuzk.v1 gRPC protocol
//	c2 devices       list CUDA devices, or say why there are none
//
// Run `c2 <command> -h` for a command's flags.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"sort"
)

// parseFlags parses args with fs and refuses positional arguments: flag
// parsing stops at the first one, so a stray word would silently drop every
// flag after it (`--c1 X stray --out Y` would lose --out).
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q: %s takes only flags (flags after it were not read)", fs.Arg(0), fs.Name())
	}
	return nil
}

type command struct {
	summary string
	run     func(args []string) error
}

var commands = map[string]command{}

// register adds a subcommand; each command's file registers itself.
func register(name, summary string, run func(args []string) error) {
	commands[name] = command{summary, run}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: c2 <command> [flags]\n\ncommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	width := 0
	for _, n := range names {
		width = max(width, len(n))
	}
	for _, n := range names {
		fmt.Fprintf(os.Stderr, "  %-*s %s\n", width, n, commands[n].summary)
	}
}

func main() {
	if len(os.Args) < 2 {
		usage()
		os.Exit(2)
	}
	cmd, ok := commands[os.Args[1]]
	if !ok {
		if os.Args[1] != "-h" && os.Args[1] != "help" && os.Args[1] != "--help" {
			fmt.Fprintf(os.Stderr, "c2: unknown command %q\n", os.Args[1])
		}
		usage()
		os.Exit(2)
	}
	if err := cmd.run(os.Args[2:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(2)
		}
		fmt.Fprintf(os.Stderr, "c2 %s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
}
