#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The kafkabot Authors
#
# Adds the project's license header to every Go and shell source file that
# lacks it, or with --check lists those files and exits 1 (CI).
#
#   bash hack/license-headers.sh [--check] [ROOT]     (default: this repository)
#
# The header is the short SPDX form the Apache License's appendix allows:
#
#   // SPDX-License-Identifier: Apache-2.0        (# in shell scripts)
#   // Copyright 2026 The kafkabot Authors
#
# Go files get it first, followed by a blank line (so that it never becomes
# a package doc comment; build constraints may follow it). Shell scripts keep
# their #! line first. Files under testdata/ (test inputs, kept as found) and
# .cache/ are left alone. The files are git's tracked and untracked ones
# (git ls-files), or every file under ROOT when ROOT is not a git checkout.
# Running it twice changes nothing the second time.
set -euo pipefail

check=false
if [[ "${1:-}" == "--check" ]]; then
	check=true
	shift
fi
root="${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
if [[ $# -gt 1 ]]; then
	echo "usage: $0 [--check] [ROOT]" >&2
	exit 2
fi
cd "${root}"

spdx="SPDX-License-Identifier: Apache-2.0"
copyright="Copyright 2026 The kafkabot Authors"

list_files() {
	if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		git ls-files -z --cached --others --exclude-standard -- '*.go' '*.sh'
	else
		find . \( -name '*.go' -o -name '*.sh' \) -type f -print0 | sed -z 's|^\./||'
	fi
}

missing=0
while IFS= read -r -d '' f; do
	case "/${f}" in
	*/testdata/* | /.cache/*) continue ;;
	esac
	[[ -f "${f}" ]] || continue
	# The header is within the first lines: after a #! line at most.
	if head -n 3 "${f}" | grep -q "${spdx}"; then
		continue
	fi
	missing=$((missing + 1))
	if ${check}; then
		echo "${f}"
		continue
	fi
	tmp="$(mktemp)"
	case "${f}" in
	*.go)
		printf '// %s\n// %s\n\n' "${spdx}" "${copyright}" >"${tmp}"
		cat "${f}" >>"${tmp}"
		;;
	*.sh)
		if head -n 1 "${f}" | grep -q '^#!'; then
			head -n 1 "${f}" >"${tmp}"
			printf '# %s\n# %s\n' "${spdx}" "${copyright}" >>"${tmp}"
			tail -n +2 "${f}" >>"${tmp}"
		else
			printf '# %s\n# %s\n' "${spdx}" "${copyright}" >"${tmp}"
			cat "${f}" >>"${tmp}"
		fi
		;;
	esac
	# Keep the file's mode (scripts stay executable).
	cat "${tmp}" >"${f}"
	rm -f "${tmp}"
done < <(list_files)

if ${check}; then
	if [[ ${missing} -gt 0 ]]; then
		echo "license-headers: ${missing} file(s) above lack the license header: bash hack/license-headers.sh adds it" >&2
		exit 1
	fi
	exit 0
fi
echo "license-headers: added the header to ${missing} file(s)" >&2
