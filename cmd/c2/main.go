// Command c2 produces and checks Filecoin Groth16 (BLS12-381) proofs: PoRep
// C2, Window and Winning PoSt, and SnapDeals updates. It also generates
// development parameters and synthetic C1 outputs, benchmarks the proving
// pipeline and runs a proving daemon for Curio.
//
// Usage:
//
//	c2 <command> [flags]
//
// Run `c2 help` for the list of commands and `c2 help <command>` (or
// `c2 <command> -h`) for a command's flags.
package main

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

// A command is a c2 subcommand.
type command struct {
	// UsageLine is the one-line usage message, "c2 NAME ..."; its second
	// word is the command's name.
	UsageLine string
	// Short is the one-line summary `c2 -h` prints.
	Short string
	// Long is the description `c2 NAME -h` prints after the usage line
	// and before the flags; it may be empty.
	Long string
	// Run defines the command's flags on fs, parses args with them
	// (parseFlags) and runs the command.
	Run func(fs *flag.FlagSet, args []string) error
}

// commands are the c2 subcommands; `c2 -h` lists them sorted by name.
var commands = []*command{
	{
		UsageLine: "c2 demo [--synthetic [--log N] [--seed N]] [--params DIR] [--backend NAME]",
		Short:     "prove an embedded 2 KiB sector's C1 output (development parameters, cached)",
		Run:       runDemo,
	},
	{
		UsageLine: "c2 prove --c1 FILE --params PATH [--out FILE] [flags]",
		Short:     "prove a PoRep C1 output (seal commit phase 2)",
		Run:       runProve,
	},
	{
		UsageLine: "c2 post-prove --proof NAME --randomness HEX --vanilla FILE... --params PATH [--partition K] [--out FILE] [flags]",
		Short:     "prove a Window or Winning PoSt from per-sector vanilla proofs",
		Run:       runPoStProve,
	},
	{
		UsageLine: "c2 update-prove --proof NAME --comm-r-old HEX --comm-r-new HEX --comm-d-new HEX --vanilla FILE... --params PATH [--out FILE] [flags]",
		Short:     "prove a SnapDeals sector update from its vanilla partition proofs",
		Run:       runUpdateProve,
	},
	{
		UsageLine: "c2 verify --vk KEY --proof FILE (--c1 FILE | --inputs FILE)",
		Short:     "verify a proof file against a .vk/.params file and public inputs",
		Long:      "Exit status 0 when every proof is valid.",
		Run:       runVerify,
	},
	{
		UsageLine: "c2 setup (--sector-size SIZE | --post NAME | --update NAME) [--gpu] --out DIR",
		Short:     "generate INSECURE development parameters for a PoRep sector size, a PoSt or a SnapDeals proof",
		Long: "Generates Groth16 parameters for the PoRep circuit of one sector size, or the\n" +
			"PoSt circuit of one registered PoSt proof, or the SnapDeals circuit of one\n" +
			"registered update proof, from a\n" +
			"single-party random setup. THEY ARE INSECURE: proofs made with them are\n" +
			"worthless on chain. Files are named " + devPrefix + "<official name>.{params,vk}.\n" +
			"With --gpu the key is made in a CUDA device's memory and written from there:\n" +
			"the way to development parameters of 32 GiB and 64 GiB sectors.",
		Run: runSetup,
	},
	{
		UsageLine: "c2 c1gen (--sector-size SIZE [--v1_1] | --proof NAME) [--seed HEX] [--out FILE] [--commit2in] [--check]",
		Short:     "write a synthetic but valid C1 output for a sector size, without sealing",
		Long: "Writes the C1 output of a synthetic committed-capacity sector: the vanilla proofs\n" +
			"answer the real challenges of its replica id and seed, so C2 accepts it and its\n" +
			"circuits are satisfied, but only the challenged nodes and their parents carry\n" +
			"labels, so it proves nothing on chain. Synthetic and NI-PoRep proofs, whose\n" +
			"challenges follow from comm_r, are labeled whole (2 KiB and 8 MiB only).\n" +
			"The same flags give the same bytes.",
		Run: runC1gen,
	},
	{
		UsageLine: "c2 postgen --proof NAME [--sectors N] [--first-id ID] [--seed HEX] [--randomness HEX] [--out FILE]",
		Short:     "write synthetic but valid PoSt vanilla proofs (a JSON array for post-prove --vanilla)",
		Long: "Writes the vanilla proofs of synthetic sectors for a Window or Winning PoSt: each\n" +
			"sector's tree R_last holds derived values at the leaves the randomness\n" +
			"challenges, so the proofs pass the native checks and their circuits are\n" +
			"satisfied, but they prove nothing on chain. The same flags give the same bytes;\n" +
			"the randomness used is printed for post-prove --randomness.",
		Run: runPoStgen,
	},
	{
		UsageLine: "c2 bench [-sector-size SIZE -params DIR | -c1 FILE -params PATH] [flags]",
		Short:     "benchmark the proving pipeline: synthetic partitions, or synthetic C1s of a sector size (-sector-size)",
		Run:       runBench,
	},
	{
		UsageLine: "c2 serve [--config FILE] [flags]",
		Short:     "run a proving daemon speaking Curio's cuzk.v1 gRPC protocol",
		Long: "Proves for Curio: answers the cuzk.v1.ProvingEngine gRPC service (PoRep C2,\n" +
			"SnapDeals, Window PoSt partitions, Winning PoSt), so that setting Curio's\n" +
			"[Cuzk] Address to this daemon replaces cuzk. A second signal cancels the\n" +
			"running jobs at once.",
		Run: runServe,
	},
	{
		UsageLine: "c2 submit --kind KIND (--c1 FILE | --proof NAME --vanilla FILE... [--randomness HEX] [--partition K]) [--addr ADDR] [--out FILE]",
		Short:     "send one job to a proving daemon (c2 serve, cuzk) and print its answer and timings",
		Long: "Submits one job over the cuzk.v1 gRPC protocol, waits for it to end and prints\n" +
			"a JSON line: its status, the daemon's timings and the wall time from submission\n" +
			"to answer (milliseconds). Exit status 0 when the job completed.",
		Run: runSubmit,
	},
	{
		UsageLine: "c2 devices",
		Short:     "list the CUDA devices c2 can use (or say why none)",
		Run:       runDevices,
	},
}

// Name returns the command's name, the second word of its UsageLine.
func (c *command) Name() string {
	return strings.Fields(c.UsageLine)[1]
}

// FlagSet returns a new, empty flag set for the command whose usage prints
// the usage line, the description and the flags the command defines.
func (c *command) FlagSet() *flag.FlagSet {
	fs := flag.NewFlagSet(c.Name(), flag.ContinueOnError)
	fs.Usage = func() {
		text := "usage: " + c.UsageLine
		if c.Long != "" {
			text += "\n\n" + c.Long
		}
		fmt.Fprintln(fs.Output(), text)
		fs.PrintDefaults()
	}
	return fs
}

// lookup returns the command called name, or nil.
func lookup(name string) *command {
	for _, c := range commands {
		if c.Name() == name {
			return c
		}
	}
	return nil
}

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

// usage writes the command list to w.
func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: c2 <command> [flags]\n\ncommands:")
	sorted := slices.SortedFunc(slices.Values(commands), func(a, b *command) int {
		return cmp.Compare(a.Name(), b.Name())
	})
	width := 0
	for _, c := range sorted {
		width = max(width, len(c.Name()))
	}
	for _, c := range sorted {
		fmt.Fprintf(w, "  %-*s %s\n", width, c.Name(), c.Short)
	}
	fmt.Fprintln(w, "\nRun `c2 help <command>` or `c2 <command> -h` for a command's flags.")
}

// help answers `c2 help [COMMAND]` on stdout: the command list, or one
// command's usage, description and flags. It returns the exit status: 0, or
// 2 for an unknown command (named on stderr).
func help(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stdout)
		return 0
	}
	c := lookup(args[0])
	if c == nil || len(args) > 1 {
		fmt.Fprintf(stderr, "c2 help: unknown help topic %q; run `c2 help` for the commands\n", strings.Join(args, " "))
		return 2
	}
	fs := c.FlagSet()
	fs.SetOutput(stdout)
	if err := c.Run(fs, []string{"-h"}); !errors.Is(err, flag.ErrHelp) {
		// Every command parses its flags before it does anything, so -h
		// stops it there; anything else is a command that does not.
		fmt.Fprintf(stderr, "c2 help %s: the command did not stop at -h (%v)\n", c.Name(), err)
		return 2
	}
	return 0
}

// dispatch runs the command named by args[0] with the rest of args and
// returns the process's exit status: 0 on success, 1 when the command
// fails (its error on stderr), 2 for a usage error or -h.
func dispatch(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	switch args[0] {
	case "help":
		return help(args[1:], stdout, stderr)
	case "-h", "-help", "--help":
		usage(stdout)
		return 0
	}
	cmd := lookup(args[0])
	if cmd == nil {
		fmt.Fprintf(stderr, "c2: unknown command %q\n", args[0])
		usage(stderr)
		return 2
	}
	fs := cmd.FlagSet()
	fs.SetOutput(stderr)
	if err := cmd.Run(fs, args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 2
		}
		fmt.Fprintf(stderr, "c2 %s: %v\n", cmd.Name(), err)
		return 1
	}
	return 0
}

func main() {
	os.Exit(dispatch(os.Args[1:], os.Stdout, os.Stderr))
}
