package contracts

import "regexp"

// ContractIDPattern is contract_id's pattern in contract.schema.json. An id that matches is a
// safe path element, branch suffix, workflow id part and store name, so every place that
// turns an id into one of those checks it with ValidContractID rather than trusting it.
const ContractIDPattern = `^[a-z0-9][a-z0-9-]{2,63}$`

var contractIDRe = regexp.MustCompile(ContractIDPattern)

// ValidContractID reports whether id matches ContractIDPattern.
func ValidContractID(id string) bool { return contractIDRe.MatchString(id) }
