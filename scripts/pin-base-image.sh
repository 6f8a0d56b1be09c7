#!/usr/bin/env bash
# Pins triton-image/Dockerfile to one Triton release by tag and digest: rewrites `ARG TRITON_VERSION=` and
# `ARG BASE_DIGEST=` together, so the tag a reader sees and the bytes Docker pulls cannot drift apart.
#
#   scripts/pin-base-image.sh 24.09                      # looks the digest up (docker buildx or skopeo, network)
#   scripts/pin-base-image.sh 24.09 --digest sha256:...  # a digest you looked up yourself
#
# The digest is the one of the multi-platform index `nvcr.io/nvidia/tritonserver:<version>-py3`, as
# `docker buildx imagetools inspect` prints it on its first `Digest:` line (or the sha256 of `skopeo inspect --raw`,
# which is the same by definition). Exit codes: 0 pinned, 1 lookup or rewrite failed, 2 bad arguments.
set -euo pipefail

usage() {
  printf 'usage: %s <triton-version YY.MM> [--digest sha256:<64 hex>] [--dockerfile <path>]\n' "$0" >&2
  exit 2
}

fail() {
  printf 'pin-base-image: %s\n' "$@" >&2
  exit 1
}

version=""
digest=""
dockerfile="$(cd "$(dirname "$0")/.." && pwd)/triton-image/Dockerfile"
while (($# > 0)); do
  case "$1" in
    --digest)
      (($# >= 2)) || usage
      digest="$2"
      shift 2
      ;;
    --dockerfile)
      (($# >= 2)) || usage
      dockerfile="$2"
      shift 2
      ;;
    -h | --help) usage ;;
    -*) printf 'pin-base-image: unknown option %s\n' "$1" >&2 && usage ;;
    *)
      [[ -z "$version" ]] || usage
      version="$1"
      shift
      ;;
  esac
done

[[ -n "$version" ]] || usage
if [[ ! "$version" =~ ^[0-9]{2}\.[0-9]{2}$ ]]; then
  printf 'pin-base-image: version %s is not of the form YY.MM (for example 24.09)\n' "$version" >&2
  exit 2
fi
if [[ -n "$digest" && ! "$digest" =~ ^sha256:[0-9a-f]{64}$ ]]; then
  printf 'pin-base-image: digest %s is not of the form sha256:<64 lowercase hex digits>\n' "$digest" >&2
  exit 2
fi
[[ -f "$dockerfile" ]] || fail "no Dockerfile at ${dockerfile}"

image="nvcr.io/nvidia/tritonserver:${version}-py3"
if [[ -z "$digest" ]]; then
  if command -v docker >/dev/null 2>&1 && docker buildx version >/dev/null 2>&1; then
    inspected="$(docker buildx imagetools inspect "$image")" || fail "docker buildx imagetools inspect ${image} failed"
    digest="$(sed -n 's/^Digest:[[:space:]]*\(sha256:[0-9a-f]\{64\}\)[[:space:]]*$/\1/p' <<<"$inspected" | head -n 1)"
  elif command -v skopeo >/dev/null 2>&1; then
    raw="$(skopeo inspect --raw "docker://${image}")" || fail "skopeo inspect --raw docker://${image} failed"
    digest="sha256:$(printf '%s' "$raw" | sha256sum | cut -d' ' -f1)"
  else
    fail "neither docker buildx nor skopeo is installed to look up ${image};" \
      "look the digest up elsewhere and pass it with --digest sha256:..."
  fi
  [[ "$digest" =~ ^sha256:[0-9a-f]{64}$ ]] || fail "could not read a digest for ${image} (got '${digest}')"
fi

for arg in TRITON_VERSION BASE_DIGEST; do
  count="$(grep -c "^ARG ${arg}=" "$dockerfile" || true)"
  [[ "$count" == 1 ]] || fail "${dockerfile} must hold exactly one 'ARG ${arg}=' line (found ${count})"
done

# Written beside the Dockerfile and renamed over it, so a failure never leaves half a file.
tmp="$(mktemp "${dockerfile}.XXXXXX")"
trap 'rm -f "$tmp"' EXIT
sed -e "s/^ARG TRITON_VERSION=.*/ARG TRITON_VERSION=${version}/" -e "s/^ARG BASE_DIGEST=.*/ARG BASE_DIGEST=${digest}/" \
  "$dockerfile" >"$tmp"
chmod --reference="$dockerfile" "$tmp"
mv "$tmp" "$dockerfile"
trap - EXIT

printf 'Pinned %s to %s@%s\n' "$dockerfile" "$image" "$digest"
catalog="$(dirname "$dockerfile")/../lib/catalog/triton-images.ts"
if [[ -f "$catalog" ]] && ! grep -q "DEFAULT_TRITON_VERSION = '${version}'" "$catalog"; then
  printf 'Also set DEFAULT_TRITON_VERSION to %s in lib/catalog/triton-images.ts (a test keeps the two equal).\n' "$version"
fi
