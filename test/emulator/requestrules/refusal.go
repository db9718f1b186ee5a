package requestrules

// Refusal is why Linode refuses a request body: the field it names, its reason, and where the
// rule comes from.
type Refusal struct {
	Field  string
	Reason string
	Source string
}
