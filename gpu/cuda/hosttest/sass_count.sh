#!/bin/sh
# Counts SASS instructions per kernel of a cubin: total (NOPs left out),
# compute (total less loads, stores, control) and by opcode class.
# Usage: sass_count.sh file.cubin
cuobjdump -sass "$1" | awk '
/Function :/ { if (name) out(); name = $3; delete c; tot = 0; next }
/^ +\/\*[0-9a-f]+\*\// {
    line = $0; sub(/^ +\/\*[0-9a-f]+\*\/ +/, "", line); sub(/ ;.*/, "", line)
    n = split(line, w, " "); op = w[1]; if (op ~ /^@/) op = w[2]
    if (op == "NOP" ) next
    tot++
    if (op ~ /^IMAD.WIDE.U32.X/) c["IMAD.WIDE.X"]++
    else if (op ~ /^IMAD.WIDE/) c["IMAD.WIDE"]++
    else if (op ~ /^IMAD.HI/) c["IMAD.HI"]++
    else if (op ~ /^IMAD.X/) c["IMAD.X"]++
    else if (op ~ /^IMAD/) c["IMAD"]++
    else if (op ~ /^IADD3/) c["IADD3"]++
    else if (op ~ /^(LDG|STG|LDC|ULDC|S2R|S2UR|EXIT|BRA)/) c["ld/st/ctl"]++
    else c["other"]++
}
function out() {
    short = name
    if (match(name, /k_[a-z0-9_]+/)) short = substr(name, RSTART, RLENGTH)
    printf "%-16s total %4d  compute %4d", short, tot, tot - c["ld/st/ctl"]
    split("IMAD.WIDE IMAD.WIDE.X IMAD.HI IMAD.X IMAD IADD3 ld/st/ctl other", k, " ")
    for (i = 1; i <= 8; i++) printf "  %s %d", k[i], c[k[i]] + 0
    printf "\n"
}
END { if (name) out() }'
