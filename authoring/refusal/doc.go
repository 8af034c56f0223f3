// Package refusal holds the errors that mean "this request will not become a contract as
// asked": a malformed argument (InputError) and a goal refused with its reason (Error). The
// survey, the criteria rules and the Author all return them, so they live below all three.
package refusal
