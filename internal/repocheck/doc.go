// Package repocheck holds tests of the repository itself rather than of a package: refs_test.go
// checks that the paths named in Go comments and in markdown files exist, floors_test.go
// that the packages of cdc import only downward. It has no code.
package repocheck
