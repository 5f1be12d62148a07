// Package archtest holds onic's architecture rules in its tests: the
// layer list in docs/architecture.md is every package of the module, and
// imports only point down it. It has no code of its own.
package archtest
