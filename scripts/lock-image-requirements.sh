#!/usr/bin/env bash
# Adds to triton-image/requirements.txt the sha256 of every wheel pip would install for one CPython version on x86-64
# Linux, so `pip install --require-hashes --only-binary=:all: --no-deps` accepts that Python too. Hashes already in
# the file are kept: one file can serve the 3.10 of Triton <= 24.11 and the 3.12 of 24.12 and later.
#
#   scripts/lock-image-requirements.sh 3.12        # downloads the wheels with pip (network)
#
# Exit codes: 0 locked, 1 a download or the rewrite failed, 2 bad arguments.
set -euo pipefail

usage() {
  printf 'usage: %s <python-version X.Y> [--requirements <path>]\n' "$0" >&2
  exit 2
}

python_version=""
requirements="$(cd "$(dirname "$0")/.." && pwd)/triton-image/requirements.txt"
while (($# > 0)); do
  case "$1" in
    --requirements)
      (($# >= 2)) || usage
      requirements="$2"
      shift 2
      ;;
    -h | --help) usage ;;
    -*) printf 'lock-image-requirements: unknown option %s\n' "$1" >&2 && usage ;;
    *)
      [[ -z "$python_version" ]] || usage
      python_version="$1"
      shift
      ;;
  esac
done
[[ -n "$python_version" ]] || usage
if [[ ! "$python_version" =~ ^3\.[0-9]{1,2}$ ]]; then
  printf 'lock-image-requirements: python version %s is not of the form 3.Y (for example 3.12)\n' "$python_version" >&2
  exit 2
fi
if [[ ! -f "$requirements" ]]; then
  printf 'lock-image-requirements: no requirements file at %s\n' "$requirements" >&2
  exit 1
fi

downloads="$(mktemp -d)"
out="$(mktemp "${requirements}.XXXXXX")"
trap 'rm -rf "$downloads" "$out"' EXIT

# Rewrites the file requirement by requirement: comments and blank lines are copied, each `name==version` line (with
# its `\`-continued `--hash` lines) is written back with the union of old and new hashes.
emit() {
  local requirement="$1" dir="$downloads/${1//[^A-Za-z0-9._-]/_}" file hash
  shift
  local -a hashes=("$@")
  mkdir -p "$dir"
  python3 -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
    --implementation cp --python-version "$python_version" --platform manylinux2014_x86_64 \
    --dest "$dir" "$requirement" >&2 || {
    printf 'lock-image-requirements: pip could not download a CPython %s wheel of %s\n' "$python_version" "$requirement" >&2
    exit 1
  }
  for file in "$dir"/*.whl; do
    [[ -e "$file" ]] || continue
    hash="$(sha256sum "$file" | cut -d' ' -f1)"
    [[ "$notes" == *"|# ${file##*/}|"* ]] || printf '# %s\n' "${file##*/}" >>"$out"
    [[ " ${hashes[*]} " == *" $hash "* ]] || hashes+=("$hash")
  done
  printf '%s' "$requirement" >>"$out"
  for hash in "${hashes[@]}"; do
    printf ' \\\n    --hash=sha256:%s' "$hash" >>"$out"
  done
  printf '\n' >>"$out"
  notes="|"
}

current=""
current_hashes=()
# The `# <wheel file>` notes already written above the requirement being read, so emit does not repeat them.
notes="|"
while IFS= read -r line || [[ -n "$line" ]]; do
  if [[ "$line" =~ ^([A-Za-z0-9][A-Za-z0-9._-]*==[^[:space:]\\]+) ]]; then
    [[ -z "$current" ]] || emit "$current" "${current_hashes[@]}"
    current="${BASH_REMATCH[1]}"
    current_hashes=()
  elif [[ -n "$current" && "$line" =~ --hash=sha256:([0-9a-f]{64}) ]]; then
    current_hashes+=("${BASH_REMATCH[1]}")
  else
    [[ -z "$current" ]] || emit "$current" "${current_hashes[@]}"
    current=""
    [[ ! "$line" =~ ^#\ [^[:space:]]+\.whl$ ]] || notes+="${line}|"
    printf '%s\n' "$line" >>"$out"
  fi
done <"$requirements"
[[ -z "$current" ]] || emit "$current" "${current_hashes[@]}"

chmod --reference="$requirements" "$out"
mv "$out" "$requirements"
trap 'rm -rf "$downloads"' EXIT
printf 'Locked %s for CPython %s on x86-64 Linux.\n' "$requirements" "$python_version"
