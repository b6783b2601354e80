#!/bin/sh
# Installs a released cfgctl binary: downloads the archive for this machine, checks it against
# the release's SHA256SUMS, and puts `cfgctl` in a directory. POSIX sh; used by the GitHub
# Action (action.yml) and usable as is from GitLab CI or a shell:
#
#   curl -fsSL https://raw.githubusercontent.com/OWNER/cfgctl/v0.1.0/scripts/install.sh \
#     | sh -s -- --version v0.1.0 --repo https://github.com/OWNER/cfgctl
#
# Options (each also an environment variable):
#   --version TAG       release tag to install, e.g. v0.1.0                    (CFGCTL_VERSION)
#   --repo URL          the cfgctl repository                                 (CFGCTL_REPO)
#   --base-url URL      where release files are: URL/TAG/FILE                 (CFGCTL_BASE_URL)
#                       default: REPO/releases/download
#   --dir DIR           where to put cfgctl, default $HOME/.local/bin        (CFGCTL_INSTALL_DIR)
#   --archive-cache DIR keep the verified archive in DIR and reuse it when it still matches the
#                       release's SHA256SUMS, downloaded afresh on every run  (CFGCTL_ARCHIVE_CACHE)
#   --source-fallback   build from source (cargo install --locked --git REPO --tag TAG) when no
#                       archive matches this machine or the release has none (CFGCTL_SOURCE_FALLBACK=1)
#
# The platform comes from `uname -s` / `uname -m`; CFGCTL_OS and CFGCTL_ARCH override them.
#
# The version is a release tag, `v` and a semantic version (v1.2.3, v1.2.3-rc.1), or a full
# 40-hex commit (built from source). Plain http is only for this machine (localhost, 127.0.0.1,
# [::1]); a URL holding credentials (user:password@) is refused.
#
# Exit codes: 0 installed; 1 error (download failed, checksum mismatch: nothing is installed);
# 3 no archive for this platform or version, and no --source-fallback.
set -eu

version="${CFGCTL_VERSION:-}"
repo="${CFGCTL_REPO:-}"
base_url="${CFGCTL_BASE_URL:-}"
dir="${CFGCTL_INSTALL_DIR:-}"
archive_cache="${CFGCTL_ARCHIVE_CACHE:-}"
fallback="${CFGCTL_SOURCE_FALLBACK:-0}"

say() { printf 'install.sh: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }

while [ $# -gt 0 ]; do
  case "$1" in
    --version) [ $# -ge 2 ] || die "--version needs a value"; version="$2"; shift 2 ;;
    --repo) [ $# -ge 2 ] || die "--repo needs a value"; repo="$2"; shift 2 ;;
    --base-url) [ $# -ge 2 ] || die "--base-url needs a value"; base_url="$2"; shift 2 ;;
    --dir) [ $# -ge 2 ] || die "--dir needs a value"; dir="$2"; shift 2 ;;
    --archive-cache) [ $# -ge 2 ] || die "--archive-cache needs a value"; archive_cache="$2"; shift 2 ;;
    --source-fallback) fallback=1; shift ;;
    -h|--help) sed -n '2,27p' "$0" 2>/dev/null | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option: $1 (see --help)" ;;
  esac
done

[ -n "$version" ] || die "no version: pass --version TAG (for example v0.1.0) or set CFGCTL_VERSION"
# The version names a directory and a URL path: only `v` + semver or a full commit, so `..`, `/`
# or a newline never reach them. The character check comes first so grep sees one line.
semver_re='^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$'
case "$version" in
  *[!abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.+-]*) version_ok=0 ;;
  *) if printf '%s\n' "$version" | LC_ALL=C grep -Eq "$semver_re|^[0-9a-f]{40}\$"; then version_ok=1; else version_ok=0; fi ;;
esac
[ "$version_ok" = 1 ] || die "version '$version' is not a release tag (v1.2.3) or a full commit hash"
if [ -z "$base_url" ]; then
  [ -n "$repo" ] || die "no download location: pass --repo URL (the cfgctl repository) or --base-url URL"
  base_url="${repo%/}/releases/download"
fi
[ -n "$dir" ] || dir="${HOME:?HOME is not set: pass --dir DIR}/.local/bin"

# Plain http only to this machine: an archive fetched over the network must come over TLS.
# The URL is taken apart as curl reads it (scheme, authority up to the first `/`, userinfo before
# an `@`, host, port), so `http://localhost:x@example.invalid/` is a URL to example.invalid.
check_base_url() { # URL -> sets base_url to it with the scheme in lower case
  case "$1" in
    *[!]abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._~:/%@+=,[-]*)
      die "refusing the download URL: only letters, digits and ._~:/%@+=,[]- may appear in it (no query, fragment, space or backslash)" ;;
    *://*) ;;
    *) die "refusing to download from $1: use an https:// URL" ;;
  esac
  scheme=$(printf '%s' "${1%%://*}" | tr 'ABCDEFGHIJKLMNOPQRSTUVWXYZ' 'abcdefghijklmnopqrstuvwxyz')
  rest=${1#*://}
  authority=${rest%%/*}
  case "$authority" in
    # Never echoed: it may hold a password.
    *@*) die "refusing the download URL: it holds credentials (user:password@host); give a plain URL" ;;
  esac
  case "$authority" in
    \[*\]) host=$authority; port=none ;;
    \[*\]:*) host="${authority%%]:*}]"; port=${authority#*]:} ;;
    \[*) die "refusing to download from $1: '$authority' is not a host and port" ;;
    *:*) host=${authority%%:*}; port=${authority#*:} ;;
    *) host=$authority; port=none ;;
  esac
  case "$port" in
    none) ;;
    ''|*[!0123456789]*|??????*) die "refusing to download from $1: '$port' is not a port" ;;
    *) [ "$port" -le 65535 ] || die "refusing to download from $1: '$port' is not a port" ;;
  esac
  case "$host" in
    '') die "refusing to download from $1: no host" ;;
    \[*\]) case "${host#[}" in
             *[!0123456789abcdefABCDEF:.]*]) die "refusing to download from $1: '$host' is not an IPv6 address" ;;
           esac ;;
    *[!abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-]*)
      die "refusing to download from $1: '$host' is not a host name" ;;
  esac
  host_lc=$(printf '%s' "$host" | tr 'ABCDEFGHIJKLMNOPQRSTUVWXYZ' 'abcdefghijklmnopqrstuvwxyz')
  case "$scheme" in
    https) ;;
    http)
      case "$host_lc" in
        localhost|127.0.0.1|'[::1]') ;;
        *) die "refusing to download from $1: use an https:// URL" ;;
      esac ;;
    *) die "refusing to download from $1: use an https:// URL" ;;
  esac
  base_url="$scheme://$rest"
}
check_base_url "$base_url"
base_url="${base_url%/}"

os="${CFGCTL_OS:-$(uname -s)}"
arch="${CFGCTL_ARCH:-$(uname -m)}"
target=""
case "$os" in
  Linux|linux)
    case "$arch" in
      x86_64|amd64) target=x86_64-unknown-linux-musl ;;
      aarch64|arm64) target=aarch64-unknown-linux-musl ;;
    esac ;;
  Darwin|darwin|macos|macOS)
    case "$arch" in
      x86_64|amd64) target=x86_64-apple-darwin ;;
      aarch64|arm64) target=aarch64-apple-darwin ;;
    esac ;;
esac

# No archive: build from source when allowed, else say what to do and exit 3.
no_archive() {
  if [ "$fallback" = 1 ]; then
    [ -n "$repo" ] || die "$1, and no --repo to build from"
    command -v cargo >/dev/null 2>&1 || die "$1, and cargo is not installed to build from source"
    say "$1: building from source with cargo"
    mkdir -p "$dir"
    # `cargo install --root R` writes R/bin/cfgctl; install it into DIR like an archive.
    root=$(mktemp -d)
    if printf '%s' "$version" | grep -Eq '^[0-9a-f]{40}$'; then
      cargo install --locked --git "$repo" --rev "$version" --root "$root" cfgctl || { rm -rf "$root"; die "cargo install failed"; }
    else
      cargo install --locked --git "$repo" --tag "$version" --root "$root" cfgctl || { rm -rf "$root"; die "cargo install failed"; }
    fi
    mv -f "$root/bin/cfgctl" "$dir/cfgctl" || { rm -rf "$root"; die "cannot write $dir/cfgctl"; }
    rm -rf "$root"
    say "installed cfgctl $version (built from source) in $dir"
    exit 0
  fi
  say "error: $1"
  say "build it from source instead: cargo install --locked --git ${repo:-<cfgctl repository>} --tag $version (or pass --source-fallback)"
  exit 3
}

if [ -z "$target" ]; then
  no_archive "no prebuilt cfgctl for $os/$arch (releases have x86_64 and aarch64 for Linux and macOS)"
fi

archive="cfgctl-$version-$target.tar.gz"

download() { # URL FILE
  if command -v curl >/dev/null 2>&1; then
    curl -fsSL --retry 3 --proto '=https,http' --proto-redir '=https' -o "$2" "$1"
  elif command -v wget >/dev/null 2>&1; then
    wget -q -O "$2" "$1"
  else
    die "neither curl nor wget is installed"
  fi
}

sha256() { # FILE -> hex digest
  if command -v sha256sum >/dev/null 2>&1; then
    sha256sum "$1" | cut -d ' ' -f 1
  elif command -v shasum >/dev/null 2>&1; then
    shasum -a 256 "$1" | cut -d ' ' -f 1
  elif command -v openssl >/dev/null 2>&1; then
    openssl dgst -sha256 -r "$1" | cut -d ' ' -f 1
  else
    die "no sha256sum, shasum or openssl to check the download"
  fi
}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT TERM

if ! download "$base_url/$version/SHA256SUMS" "$work/SHA256SUMS"; then
  no_archive "no SHA256SUMS at $base_url/$version/ (is $version a cfgctl release?)"
fi
# A line is "<64 hex>  <file>" (or "<hex> *<file>" in binary mode).
expected=$(awk -v f="$archive" '$2 == f || $2 == "*" f { print $1; exit }' "$work/SHA256SUMS")
if [ -z "$expected" ]; then
  no_archive "release $version has no archive for $target"
fi
# A kept archive is used only when it matches the SHA256SUMS just downloaded from the release: a
# cache that anything else can write (the Actions cache, a shared directory) is never trusted.
cached=""
if [ -n "$archive_cache" ] && [ -f "$archive_cache/$archive" ]; then
  if [ "$(sha256 "$archive_cache/$archive")" = "$expected" ]; then
    cached=1
    cp "$archive_cache/$archive" "$work/$archive" || die "cannot read $archive_cache/$archive"
    say "the kept $archive matches SHA256SUMS"
  else
    say "the kept $archive does not match SHA256SUMS: downloading it again"
    rm -f "$archive_cache/$archive"
  fi
fi
if [ -z "$cached" ]; then
  download "$base_url/$version/$archive" "$work/$archive" \
    || die "cannot download $base_url/$version/$archive"
  actual=$(sha256 "$work/$archive")
  if [ "$actual" != "$expected" ]; then
    die "checksum mismatch for $archive: SHA256SUMS says $expected, the download is $actual; nothing was installed"
  fi
  if [ -n "$archive_cache" ]; then
    mkdir -p "$archive_cache" && cp "$work/$archive" "$archive_cache/.$archive.tmp.$$" \
      && mv -f "$archive_cache/.$archive.tmp.$$" "$archive_cache/$archive" \
      || { rm -f "$archive_cache/.$archive.tmp.$$"; die "cannot write $archive_cache/$archive"; }
  fi
fi

mkdir -p "$work/x"
tar -xzf "$work/$archive" -C "$work/x" || die "cannot unpack $archive"
bin=""
for candidate in "$work/x/cfgctl-$version-$target/cfgctl" "$work/x/cfgctl"; do
  if [ -f "$candidate" ]; then bin="$candidate"; break; fi
done
[ -n "$bin" ] || die "$archive holds no cfgctl binary"
mkdir -p "$dir" || die "cannot create $dir"
# Copy then rename, so a running cfgctl is never half-overwritten.
cp "$bin" "$dir/.cfgctl.tmp.$$" && chmod 755 "$dir/.cfgctl.tmp.$$" \
  && mv -f "$dir/.cfgctl.tmp.$$" "$dir/cfgctl" \
  || { rm -f "$dir/.cfgctl.tmp.$$"; die "cannot write $dir/cfgctl"; }
say "installed cfgctl $version ($target) in $dir"
