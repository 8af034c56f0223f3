package verify

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mxschmitt/playwright-go"

	"github.com/signoff/signoff/contracts"
)

// variantJS applies a contracts.Variant to the pages of a base check's self-test. It is not
// part of the verifier's digest: it never takes part in a verdict (the policy refuses
// evidence that names a variant).
//
//go:embed variantjs/variant.js
var variantJS string

// variantScript is the init script that applies v to every page of a browser context.
func variantScript(v *contracts.Variant) (string, error) {
	spec, err := json.Marshal(v) // escapes <, >, &, U+2028 and U+2029: safe inside a script
	if err != nil {
		return "", fmt.Errorf("variant %s: %w", v.Name, err)
	}
	return strings.Replace(variantJS, "__SIGNOFF_VARIANT__", string(spec), 1), nil
}

// installVariant makes every page of bctx the variant's.
func installVariant(bctx playwright.BrowserContext, v *contracts.Variant) error {
	if v == nil {
		return nil
	}
	s, err := variantScript(v)
	if err != nil {
		return err
	}
	if err := bctx.AddInitScript(playwright.Script{Content: &s}); err != nil {
		return fmt.Errorf("install the lazy variant %s: %w", v.Name, err)
	}
	return nil
}
