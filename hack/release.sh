#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The kafkabot Authors
#
# Builds a release of kafkabot from this checkout, and with --push publishes
# it. RELEASING.md describes the procedure; .github/workflows/release.yml
# runs this script, and hack/release_test.go runs every step but the push.
#
#   bash hack/release.sh [--out DIR] [--base FILE] [--push]
#
# Steps, each failing the release:
#  1. the version: VERSION (semantic, no "v"), the chart's version and
#     appVersion, and a CHANGELOG.md section for it all agree;
#  2. the bot for linux/amd64 and linux/arm64 (hack/build-bot.sh, static,
#     version and commit stamped): DIR/bot-linux-ARCH;
#  3. the multi-architecture image (hack/build-image.sh -platforms, on
#     --base FILE when given: an OCI archive of the base for both platforms,
#     e.g. distroless/static-debian12:nonroot copied with skopeo --all):
#     DIR/kafkabot-image.tar, named REGISTRY/kafkabot:VERSION;
#  4. read back with skopeo: the index's digest is the one printed, and each
#     platform's image is for its architecture, runs as 65532 and carries
#     the version label;
#  5. a CycloneDX SBOM per architecture (cyclonedx-gomod, pinned, from the
#     binaries' build information): DIR/sbom-linux-ARCH.cdx.json;
#  6. the chart packaged with the image's digest pinned in its values
#     (image.repository REGISTRY/kafkabot, image.digest the index's), linted
#     (--strict) and rendered with no flags by HELM (and HELM4 when set):
#     DIR/kafkabot-VERSION.tgz;
#  7. DIR/SHA256SUMS and DIR/release.env (VERSION, IMAGE, DIGEST, per
#     architecture digests) for the workflow.
# --push (release.yml only: it refuses to run outside GitHub Actions or for
# a tag other than vVERSION) then:
#  8. pushes the image index with skopeo (--all --preserve-digests: the
#     registry serves the digest the chart pins) as REGISTRY/kafkabot:VERSION;
#  9. signs it with cosign, keyless (the workflow's OIDC identity), and
#     attaches each SBOM as a signed CycloneDX attestation to its platform's
#     image;
# 10. pushes the chart as an OCI artifact (helm push) to oci://REGISTRY/charts
#     and signs it too.
#
# Environment: REGISTRY (default ghcr.io/kafka-chatops), HELM (default helm),
# HELM4 (optional second Helm to lint with), SKOPEO (default skopeo), COSIGN
# (default cosign), SOURCE_DATE_EPOCH (default HEAD's commit time).
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "${repo_root}"

log() { echo "release: $*" >&2; }
die() {
	echo "release: $*" >&2
	exit 1
}

out="dist"
base=""
push=false
while [[ $# -gt 0 ]]; do
	case "$1" in
	--out)
		out="$2"
		shift 2
		;;
	--base)
		base="$2"
		shift 2
		;;
	--push)
		push=true
		shift
		;;
	*)
		die "unknown argument $1 (usage: hack/release.sh [--out DIR] [--base FILE] [--push])"
		;;
	esac
done

REGISTRY="${REGISTRY:-ghcr.io/kafka-chatops}"
HELM="${HELM:-helm}"
HELM4="${HELM4:-}"
SKOPEO="${SKOPEO:-skopeo}"
COSIGN="${COSIGN:-cosign}"
platforms=(amd64 arm64)
cyclonedx_gomod="github.com/CycloneDX/cyclonedx-gomod/cmd/cyclonedx-gomod@v1.10.0"

# 1. The version.
version="$(tr -d '[:space:]' <VERSION)"
[[ "${version}" =~ ^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?$ ]] ||
	die "VERSION holds \"${version}\", not a semantic version such as 1.2.3 (no leading v)"
chart_field() { sed -n "s/^$1: *\"\{0,1\}\([^\"]*\)\"\{0,1\} *$/\1/p" deploy/helm/kafkabot/Chart.yaml; }
[[ "$(chart_field version)" == "${version}" && "$(chart_field appVersion)" == "${version}" ]] ||
	die "deploy/helm/kafkabot/Chart.yaml has version $(chart_field version) and appVersion $(chart_field appVersion); VERSION says ${version}: set both to it"
grep -q "^## \[${version}\]" CHANGELOG.md || die "CHANGELOG.md has no \"## [${version}]\" section"
if ${push}; then
	[[ "${GITHUB_ACTIONS:-}" == "true" ]] || die "--push is for the release workflow (.github/workflows/release.yml) only; run without it to build and check a release here"
	[[ "${GITHUB_REF_NAME:-}" == "v${version}" ]] || die "--push: the tag is \"${GITHUB_REF_NAME:-}\", VERSION says v${version}"
	grep -Eq "^## \[${version}\] - [0-9]{4}-[0-9]{2}-[0-9]{2}$" CHANGELOG.md ||
		die "CHANGELOG.md's \"## [${version}]\" heading has no release date (## [${version}] - YYYY-MM-DD)"
	git diff --quiet HEAD -- || die "--push: the checkout has changes"
fi
commit="$(git rev-parse HEAD)"
export SOURCE_DATE_EPOCH="${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct HEAD)}"
image="${REGISTRY}/kafkabot"
log "kafkabot ${version} (commit ${commit}) for ${platforms[*]}, image ${image}"

mkdir -p "${out}"
out="$(cd "${out}" && pwd)"

# 2. The bot, per architecture.
for arch in "${platforms[@]}"; do
	VERSION="${version}" COMMIT="${commit}" GOOS=linux GOARCH="${arch}" bash hack/build-bot.sh "${out}/bot-linux-${arch}" >/dev/null
done

# 3. The multi-architecture image.
image_args=("${out}/kafkabot-image.tar" -name "${image}:${version}" -version "${version}" -revision "${commit}"
	-platforms "$(printf 'linux/%s,' "${platforms[@]}" | sed 's/,$//')")
if [[ -n "${base}" ]]; then
	image_args+=(-base "${base}")
fi
build_out="$(bash hack/build-image.sh "${image_args[@]}")"
echo "${build_out}" >&2
digest="$(sed -n 's/^digest: *//p' <<<"${build_out}")"
[[ "${digest}" =~ ^sha256:[0-9a-f]{64}$ ]] || die "the image build printed no digest"

# 4. Read back with skopeo.
raw_digest="sha256:$("${SKOPEO}" inspect --raw "oci-archive:${out}/kafkabot-image.tar" | sha256sum | cut -d' ' -f1)"
[[ "${raw_digest}" == "${digest}" ]] || die "skopeo reads an index of digest ${raw_digest}, the build printed ${digest}"
declare -A arch_digest
for arch in "${platforms[@]}"; do
	arch_digest[${arch}]="$(sed -n "s|^linux/${arch}: *||p" <<<"${build_out}")"
	cfg="$("${SKOPEO}" --override-arch "${arch}" --override-os linux inspect --config "oci-archive:${out}/kafkabot-image.tar")"
	grep -Eq "\"architecture\": *\"${arch}\"" <<<"${cfg}" || die "skopeo: the ${arch} image's config is for another architecture"
	grep -Eq '"User": *"65532:65532"' <<<"${cfg}" || die "skopeo: the ${arch} image does not run as 65532:65532"
	grep -Eq "\"org\.opencontainers\.image\.version\": *\"${version}\"" <<<"${cfg}" || die "skopeo: the ${arch} image is not labelled version ${version}"
done

# 5. The SBOMs.
for arch in "${platforms[@]}"; do
	go run "${cyclonedx_gomod}" bin -json -version "${version}" -output "${out}/sbom-linux-${arch}.cdx.json" "${out}/bot-linux-${arch}" 2>/dev/null ||
		die "cyclonedx-gomod failed for ${arch}"
done

# 6. The chart, its image pinned.
rm -rf "${out}/chart"
mkdir -p "${out}/chart"
cp -r deploy/helm/kafkabot "${out}/chart/kafkabot"
values="${out}/chart/kafkabot/values.yaml"
[[ "$(grep -c '^  repository: ghcr.io/kafka-chatops/kafkabot$' "${values}")" == 1 && "$(grep -c '^  digest: ""$' "${values}")" == 1 ]] ||
	die "values.yaml: want exactly one image repository line and one empty digest line to pin"
sed -i "s|^  repository: ghcr.io/kafka-chatops/kafkabot$|  repository: ${image}|; s|^  digest: \"\"$|  digest: ${digest}|" "${values}"
for helm in "${HELM}" ${HELM4:+"${HELM4}"}; do
	"${helm}" lint --strict "${out}/chart/kafkabot" >&2
	rendered="$("${helm}" template "${out}/chart/kafkabot")"
	grep -q "image: \"${image}@${digest}\"" <<<"${rendered}" || die "${helm} template of the packaged chart does not run ${image}@${digest}"
done
"${HELM}" package "${out}/chart/kafkabot" --destination "${out}" >&2
chart_tgz="${out}/kafkabot-${version}.tgz"
[[ -f "${chart_tgz}" ]] || die "helm package wrote no ${chart_tgz}"

# 7. Checksums and what the workflow needs.
(cd "${out}" && sha256sum kafkabot-image.tar "kafkabot-${version}.tgz" bot-linux-* sbom-linux-* >SHA256SUMS)
{
	echo "VERSION=${version}"
	echo "IMAGE=${image}"
	echo "DIGEST=${digest}"
	for arch in "${platforms[@]}"; do
		echo "DIGEST_${arch^^}=${arch_digest[${arch}]}"
	done
} >"${out}/release.env"
log "built: ${image}:${version}@${digest}, chart ${chart_tgz}"

if ! ${push}; then
	log "not pushed (--push is the release workflow's)"
	exit 0
fi

# 8. Push the image, digests kept.
"${SKOPEO}" copy --all --preserve-digests "oci-archive:${out}/kafkabot-image.tar" "docker://${image}:${version}"
pushed="sha256:$("${SKOPEO}" inspect --raw "docker://${image}:${version}" | sha256sum | cut -d' ' -f1)"
[[ "${pushed}" == "${digest}" ]] || die "the registry serves ${pushed} for ${image}:${version}, the build made ${digest}"

# 9. Sign it (keyless) and attest the SBOMs.
"${COSIGN}" sign --yes "${image}@${digest}"
for arch in "${platforms[@]}"; do
	"${COSIGN}" attest --yes --type cyclonedx --predicate "${out}/sbom-linux-${arch}.cdx.json" "${image}@${arch_digest[${arch}]}"
done

# 10. Push the chart as an OCI artifact, and sign it.
chart_push="$("${HELM}" push "${chart_tgz}" "oci://${REGISTRY}/charts" 2>&1)"
echo "${chart_push}" >&2
chart_digest="$(sed -n 's/^Digest: *//p' <<<"${chart_push}")"
[[ -n "${chart_digest}" ]] || die "helm push printed no digest"
"${COSIGN}" sign --yes "${REGISTRY}/charts/kafkabot@${chart_digest}"
log "released ${image}:${version}@${digest} and oci://${REGISTRY}/charts/kafkabot:${version}@${chart_digest}"
