// Package suggest finds the likely intended name among candidates, for "did you mean"
// hints in error messages.
package suggest

import (
	"fmt"
	"strings"
)

// Closest returns the candidate closest to s by edit distance, ignoring case, or "" when
// none is close enough to be a likely typo: at most a third of s's length, and at least 2,
// edits away.
func Closest(s string, candidates []string) string {
	best, bestDist := "", max(2, len(s)/3)+1
	ls := strings.ToLower(s)
	for _, c := range candidates {
		if d := EditDistance(ls, strings.ToLower(c)); d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}

// DidYouMean returns ` (did you mean "x"?)` for the closest candidate, or "".
func DidYouMean(s string, candidates []string) string {
	if c := Closest(s, candidates); c != "" {
		return fmt.Sprintf(" (did you mean %q?)", c)
	}
	return ""
}

// EditDistance is the Levenshtein distance between a and b, in bytes.
func EditDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
