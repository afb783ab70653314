# Sourced by Tools/test: the previous release's `purchase-ledger`, built once from the commit
# CHANGELOG.md names for it and kept under ~/.cache/purchase-ledger/releases/, for the rolling
# upgrade test (UpgradeTests): that release must keep serving beside this one against a database
# this one migrated. Built from source rather than kept as captured SQL: only the real binary
# proves that its real queries still work on the new schema.

# Exports PL_PREVIOUS_RELEASE_BIN (the binary) and PL_PREVIOUS_RELEASE (its number).
pl_previous_release() {
  local release commit cache worktree
  # The newest "## N — DATE (commit C)" heading of CHANGELOG.md whose commit is not the one
  # checked out: the release servers of which must keep serving beside this tree.
  local head candidate_release candidate_commit
  head=$(git rev-parse HEAD)
  release= commit=
  while read -r candidate_release candidate_commit; do
    case "$head" in "$candidate_commit"*) continue ;; esac
    release=$candidate_release commit=$candidate_commit
    break
  done < <(sed -nE 's/^## ([0-9][0-9.]*) — .*\(commit ([0-9a-f]{7,40})\).*/\1 \2/p' CHANGELOG.md)
  if [ -z "${commit:-}" ]; then
    echo "previous release: CHANGELOG.md names no released commit" >&2
    return 1
  fi
  cache=${XDG_CACHE_HOME:-$HOME/.cache}/purchase-ledger/releases/$release-$commit
  # Its demo makes the database the upgrade test migrates: `purchase-ledger demo` up to 0.4.0,
  # the development executable ledger-demo from 0.5.0 on.
  local products=(purchase-ledger) product built=1
  if git show "$commit:Package.swift" 2>/dev/null | grep -q '"ledger-demo"'; then products+=(ledger-demo); fi
  for product in "${products[@]}"; do [ -x "$cache/build/debug/$product" ] || built=; done
  if [ -z "$built" ]; then
    echo "previous release: building $release ($commit) once into $cache (about 6 minutes on 2 cores)" >&2
    worktree=$(mktemp -d)
    git worktree add --detach --force "$worktree" "$commit" >/dev/null 2>&1 \
      || { echo "previous release: cannot check out $commit (a shallow clone?)" >&2; rm -rf "$worktree"; return 1; }
    mkdir -p "$cache"
    # The debug build keeps its resource bundles beside the binary, which finds them there.
    if ! (cd "$worktree" && for product in "${products[@]}"; do swift build --product "$product" --scratch-path "$cache/build" || exit 1; done >"$cache/build.log" 2>&1); then
      echo "previous release: the build failed; see $cache/build.log" >&2
      git worktree remove --force "$worktree" >/dev/null 2>&1 || true
      return 1
    fi
    git worktree remove --force "$worktree" >/dev/null 2>&1 || true
  fi
  export PL_PREVIOUS_RELEASE="$release" PL_PREVIOUS_RELEASE_BIN="$cache/build/debug/purchase-ledger"
  if [ -x "$cache/build/debug/ledger-demo" ]; then export PL_PREVIOUS_RELEASE_DEMO="$cache/build/debug/ledger-demo"; fi
}
