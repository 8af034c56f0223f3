// Package pricing prices a draft's scope: one price and a time estimate per scope, itemized,
// with an expiry. There is no cheaper tier: the criteria are the same for every budget, and a
// budget below the price is refused with what it would take to fit, never met by a weaker bar.
package pricing
