#!/usr/bin/env bash
# `make demo`: check, review the verified rewrites, apply them, check again; then one rewrite the
# verifier refuses. Each step says what its exit status means.
set -u
GRADFIX="$1"
DEMO="$2"
rm -rf "$DEMO" && mkdir -p "$DEMO/project" "$DEMO/refused"
cp examples/triplet_embedding.py examples/gradfix_fixtures.py examples/pyproject.toml \
   golden/seeds/seed1_scenario.py examples/seed2_training.py "$DEMO/project/"
cp examples/residual_alias.py "$DEMO/refused/"
cd "$DEMO/project" || exit 1

if [ -t 1 ]; then B=$'\033[1m'; N=$'\033[0m'; else B=; N=; fi
step() { printf '\n%s== %s ==%s\n$ %s\n' "$B" "$1" "$N" "$2"; }
# $2: what exit 1 means for that step
status() {
  case "$1" in
    0) echo "(exit 0: clean)";;
    1) echo "(exit 1: $2)";;
    *) echo "(exit $1: error — see above)"; exit "$1";;
  esac
}

step "1. check: what is wrong" "gradfix check ."
rc=0; "$GRADFIX" check . || rc=$?; status $rc "findings reported"

step "2. apply --diff: each rewrite, proven by running it before it is offered" "gradfix apply --diff ."
rc=0; "$GRADFIX" apply --diff . || rc=$?; status $rc "a diff was printed"

step "3. apply: write the verified rewrites (atomically, formatting and comments kept)" "gradfix apply ."
rc=0; "$GRADFIX" apply . || rc=$?; status $rc "findings remain"

step "4. check again: nothing is left (each fix was verified equivalent, fixes-crash or fixes-hazard, so apply took it)" "gradfix check ."
rc=0; "$GRADFIX" check . || rc=$?; status $rc "findings remain"

cd ../refused || exit 1
step "5. a rewrite the verifier refuses: \`skip\` aliases \`h\`, so out of place changes the output" \
     "gradfix apply --diff residual_alias.py"
rc=0; "$GRADFIX" apply --diff residual_alias.py || rc=$?; status $rc "the refused finding remains"
echo "Nothing is printed on stdout: a change that fails verification is never offered."
