#!/usr/bin/env bash
# Release build of every Lambda in template.yaml for arm64 (Graviton, provided.al2023).
# Not part of CI: one `cargo lambda build` per function, so a clean build of all fifteen takes
# about 45 minutes on two cores (measured for issue 42: 7 of 14 in 23 minutes); one function
# alone, about 10.
#
#   infra/build-lambdas.sh                   build every function -> target/lambda/<binary>/bootstrap
#   infra/build-lambdas.sh --bin api-public  build only the named function(s) (repeatable)
#   infra/build-lambdas.sh --sam             then run `sam build` (-> .aws-sam/build, ready for sam deploy)
#
# Tools: cargo-lambda (with the ziglang wheel for cross-linking) and the AWS SAM CLI, installed
# from PyPI into ./.venv-deploy. They must share one venv: cargo-lambda finds zig through the first
# `python3` on PATH, which is SAM's when SAM drives the build.
#
# The function list is read from template.yaml (`BuildProperties: Binary: <name>`), so a new
# function only needs its template block. Each binary is built with exactly the command
# `sam build` runs (`cargo lambda build --release --arm64 --bin <name>`), so `sam build` afterwards
# reuses the artifacts instead of rebuilding.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
REPO_ROOT=$PWD

usage() { sed -n '2,7p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }

RUN_SAM=0
ONLY=()
while (($# > 0)); do
    case $1 in
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
for bin in "${BINARIES[@]}"; do
    echo "==> cargo lambda build --release --arm64 --bin $bin"
    cargo lambda build --release --arm64 --bin "$bin"
done
echo "==> built in $((SECONDS - start)) s:"
# cargo-lambda writes under the cargo target directory, wherever CARGO_TARGET_DIR puts it.
TARGET_DIR="${CARGO_TARGET_DIR:-target}"
for bin in "${BINARIES[@]}"; do
    ls -l "$TARGET_DIR/lambda/$bin/bootstrap"
done

if ((RUN_SAM)); then
    echo "==> sam build"
    sam build < /dev/null
    echo "==> next: sam deploy --guided   (first time; afterwards: sam deploy)"
fi
