package contracts

// Approval records who approved which hash, where. It is bound to the hash, never inside it.
type Approval struct {
	Hash      string `json:"hash"`
	Approver  string `json:"approver"`
	Channel   string `json:"channel"`
	MessageID string `json:"message_id"`
}

// Quote is a contract as offered: the terms, their hash, who asked, and what happened to it.
// Only Contract is hashed.
type Quote struct {
	Contract  Contract    `json:"contract"`
	Hash      string      `json:"hash"`
	Requester string      `json:"requester"`
	Approval  *Approval   `json:"approval,omitempty"`
	Payment   *PaymentRef `json:"payment,omitempty"`
	Status    string      `json:"status,omitempty"`
}

// NewQuote hashes the contract and returns it as a quote for requester.
func NewQuote(c Contract, requester string) (Quote, error) {
	h, err := Hash(c)
	if err != nil {
		return Quote{}, err
	}
	return Quote{Contract: c, Hash: h, Requester: requester}, nil
}
