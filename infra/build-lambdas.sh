#!/usr/bin/env bash
# Release build of every Lambda in template.yaml for arm64 (Graviton, provided.al2023).
# One `cargo lambda build` for all of them, so every crate they share is compiled once (figures
# in the README, "Build: every Lambda function at once").
#
#   infra/build-lambdas.sh                   build every function -> target/lambda/<binary>/bootstrap
#   infra/build-lambdas.sh --bin api-public  build only the named function(s) (repeatable)
#   infra/build-lambdas.sh --sam             then stage them for `sam deploy` (-> .aws-sam/build)
#   infra/build-lambdas.sh -- --timings      pass what follows `--` to cargo (here: a timing report)
#
# Tools: cargo-lambda (with the ziglang wheel for cross-linking) and the AWS SAM CLI, installed
# from PyPI into ./.venv-deploy. They share one venv: cargo-lambda finds zig through the first
# `python3` on PATH.
#
# The function list is read from template.yaml (`BuildProperties: Binary: <name>`), so a new
# function only needs its template block. `--sam` writes what `sam build` would
# (.aws-sam/build/template.yaml with each function's CodeUri pointing at its own folder holding
# its bootstrap) without running `sam build`: that runs one cargo invocation per function, each
# resolving the features of its own dependency graph, so it would compile most shared crates
# again for every function. `sam deploy` reads .aws-sam/build/template.yaml as it would after
# `sam build`. Features that differ between functions (axum's multipart, mailward-workers' pdf)
# are unified in the one build; each binary still links only the code it reaches.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
REPO_ROOT=$PWD

usage() { sed -n '5,9p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }

RUN_SAM=0
ONLY=()
CARGO_ARGS=()
while (($# > 0)); do
    case $1 in
        --)
            shift
            CARGO_ARGS=("$@")
            break
            ;;
        --sam) RUN_SAM=1 ;;
        --bin)
            [[ $# -ge 2 ]] || { usage >&2; exit 2; }
            ONLY+=("$2")
            shift
            ;;
        -h | --help) usage; exit 0 ;;
        *) printf 'unknown argument: %s\n\n' "$1" >&2; usage >&2; exit 2 ;;
    esac
    shift
done

export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-auto}" SAM_CLI_TELEMETRY=0

# ----------------------------------------------------------------------------------------------
# Deploy tools (.venv-deploy)
# ----------------------------------------------------------------------------------------------
VENV="$REPO_ROOT/.venv-deploy"
REQUIREMENTS=(
    "cargo-lambda==1.9.2"
    "aws-sam-cli==1.170.0"
)
STAMP="$VENV/.mailward-requirements"

if [[ -x "$VENV/bin/cargo-lambda" && -x "$VENV/bin/sam" && -f "$STAMP" ]] \
    && [[ "$(cat "$STAMP")" == "$(printf '%s\n' "${REQUIREMENTS[@]}")" ]]; then
    echo "==> deploy tools: reusing .venv-deploy"
else
    echo "==> deploy tools: installing into .venv-deploy (${REQUIREMENTS[*]})"
    [[ -x "$VENV/bin/python" ]] || python3 -m venv "$VENV"
    rm -f "$STAMP"
    "$VENV/bin/python" -m pip install --disable-pip-version-check --quiet "${REQUIREMENTS[@]}"
    printf '%s\n' "${REQUIREMENTS[@]}" >"$STAMP"
fi
# `cargo lambda` is found on PATH as cargo-lambda; its zig is `python3 -m ziglang` from this venv.
export PATH="$VENV/bin:$PATH" VIRTUAL_ENV="$VENV"
echo "    $(cargo lambda -V)"

# ----------------------------------------------------------------------------------------------
# Build
# ----------------------------------------------------------------------------------------------
mapfile -t ALL_BINARIES < <(sed -nE 's/^[[:space:]]+Binary:[[:space:]]*([A-Za-z0-9_-]+)[[:space:]]*$/\1/p' template.yaml)
((${#ALL_BINARIES[@]} > 0)) || { echo "no 'Binary:' entries found in template.yaml" >&2; exit 1; }

if ((${#ONLY[@]} > 0)); then
    for name in "${ONLY[@]}"; do
        printf '%s\n' "${ALL_BINARIES[@]}" | grep -qx -- "$name" \
            || { printf '%s is not a function in template.yaml (known: %s)\n' "$name" "${ALL_BINARIES[*]}" >&2; exit 2; }
    done
    BINARIES=("${ONLY[@]}")
else
    BINARIES=("${ALL_BINARIES[@]}")
fi

start=$SECONDS
BIN_ARGS=()
for bin in "${BINARIES[@]}"; do
    BIN_ARGS+=(--bin "$bin")
done
echo "==> cargo lambda build --profile lambda --arm64 ${BIN_ARGS[*]} ${CARGO_ARGS[*]}"
cargo lambda build --profile lambda --arm64 "${BIN_ARGS[@]}" "${CARGO_ARGS[@]}"
echo "==> built in $((SECONDS - start)) s:"
# cargo-lambda writes under the cargo target directory, wherever CARGO_TARGET_DIR puts it.
TARGET_DIR="${CARGO_TARGET_DIR:-target}"
for bin in "${BINARIES[@]}"; do
    ls -l "$TARGET_DIR/lambda/$bin/bootstrap"
done

if ((RUN_SAM)); then
    echo "==> staging .aws-sam/build for sam deploy"
    rm -rf .aws-sam/build
    mkdir -p .aws-sam/build
    python3 - "$TARGET_DIR" <<'PY'
import pathlib, re, shutil, sys
target = pathlib.Path(sys.argv[1])
out = pathlib.Path(".aws-sam/build")
lines, binary, staged = [], None, []
for line in pathlib.Path("template.yaml").read_text().splitlines(keepends=True):
    found = re.match(r"\s+Binary:\s*([A-Za-z0-9_-]+)\s*$", line)
    if found:
        binary = found.group(1)
    elif binary and re.match(r"\s+CodeUri:\s*\.\s*$", line):
        line = line.replace(".", binary, 1)
        (out / binary).mkdir()
        shutil.copy2(target / "lambda" / binary / "bootstrap", out / binary / "bootstrap")
        staged.append(binary)
        binary = None
    lines.append(line)
(out / "template.yaml").write_text("".join(lines))
print(f"    {len(staged)} functions staged: {' '.join(staged)}")
PY
    echo "==> next: sam deploy --guided   (first time; afterwards: sam deploy)"
fi
