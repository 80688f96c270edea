# shellcheck shell=bash
# debian_version turns a version in `git describe --tags --always --dirty`
# form into a valid Debian package version that sorts the way the builds do
# (dpkg --compare-versions):
#
#   v1.2.3                  1.2.3
#   v1.2.3-4-gabc1234       1.2.3+git4.gabc1234   (after 1.2.3, before 1.2.4)
#   v1.2.3-4-gabc1234-dirty 1.2.3+git4.gabc1234.dirty
#   v1.2.0-rc1              1.2.0~rc1             (before 1.2.0)
#   v1.2.0-rc1-2-gabc1234   1.2.0~rc1+git2.gabc1234
#   dev, abc1234, 5e2f0a1   0~dev, 0~abc1234, 0~5e2f0a1 (before any release;
#                           a bare commit is 7-40 hex digits with a letter)
#
# It fails on an empty version and on characters other than letters, digits
# and . + ~ - (a Debian version has no others). Sourced by build-deb and by
# systemd/deb_test.go.
debian_version() {
	local v=${1#v}
	[[ $v =~ ^[A-Za-z0-9][A-Za-z0-9.+~-]*$ ]] || return 1
	if [[ $v =~ ^([0-9a-f]{7,40})(-dirty)?$ && ${BASH_REMATCH[1]} == *[a-f]* ]]; then
		v="0~${v//-/\~}"
	elif [[ $v =~ ^([0-9][0-9A-Za-z.~-]*)-([0-9]+)-g([0-9a-f]+)(-dirty)?$ ]]; then
		local tag=${BASH_REMATCH[1]}
		v="${tag//-/\~}+git${BASH_REMATCH[2]}.g${BASH_REMATCH[3]}"
		[[ -z ${BASH_REMATCH[4]} ]] || v+=".dirty"
	else
		[[ $v =~ ^[0-9] ]] || v="0~$v"
		v=${v//-/\~}
	fi
	printf '%s\n' "$v"
}
