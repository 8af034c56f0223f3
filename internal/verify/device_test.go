package verify

import (
	"encoding/json"
	"testing"

	"github.com/signoff/signoff/contracts"
)

// deviceSignals are the common ways a page tells a verifier or a desktop from a phone. Each is
// a measure expression that must be true in the verifier's browser at a phone's viewport, and
// the second list at a desktop's.
var phoneSignals = []string{
	`navigator.webdriver === false`,
	`!/headless/i.test(navigator.userAgent)`,
	`/Android.*Mobile/.test(navigator.userAgent)`,
	`navigator.userAgentData.mobile === true`,
	`!navigator.userAgentData.brands.some((b) => /headless/i.test(b.brand))`,
	`matchMedia('(hover: none) and (pointer: coarse)').matches`,
	`!matchMedia('(hover: hover)').matches && !matchMedia('(pointer: fine)').matches`,
	`matchMedia('(any-pointer: coarse)').matches`,
	`navigator.maxTouchPoints > 0`,
	`'ontouchstart' in window`,
	`devicePixelRatio === 3`,
	`navigator.hardwareConcurrency === 8`,
	`screen.height > innerHeight && screen.width === innerWidth`,
	`!/^(UTC|GMT|Etc\/)/.test(Intl.DateTimeFormat().resolvedOptions().timeZone)`,
}

var desktopSignals = []string{
	`navigator.webdriver === false`,
	`!/headless/i.test(navigator.userAgent)`,
	`!/Mobile/.test(navigator.userAgent)`,
	`navigator.userAgentData.mobile === false`,
	`!navigator.userAgentData.brands.some((b) => /headless/i.test(b.brand))`,
	`matchMedia('(hover: hover) and (pointer: fine)').matches`,
	`navigator.hardwareConcurrency === 8`,
	`screen.height > innerHeight`,
	`!/^(UTC|GMT|Etc\/)/.test(Intl.DateTimeFormat().resolvedOptions().timeZone)`,
}

// TestDeviceSignals: a page cannot tell the verifier's phone from a phone, or its desktop from
// a desktop, by the signals the README lists. navigator.platform and navigator.languages are
// checked by the adversaries device-x86-platform and device-one-language: these expressions
// run in the verifier's own world, where Chromium's overrides of them do not reach; the page's
// scripts see them.
func TestDeviceSignals(t *testing.T) {
	v := testVerifier(t)
	base := site(t, testSHA, map[string]string{"/d": page(``, `<p>device</p>`)}, nil).URL
	var cs []contracts.Criterion
	add := func(prefix string, vp contracts.Viewport, exprs []string) {
		for i, e := range exprs {
			c := crit(prefix+"-"+string(rune('a'+i)), "/d", contracts.Assertion{Kind: contracts.KindMeasure, Expression: e, Operator: contracts.OpEQ, Expected: json.RawMessage(`true`)}, vp)
			cs = append(cs, c)
		}
	}
	add("phone", mobile, phoneSignals)
	add("desktop", desktop, desktopSignals)
	ev := verify(t, v, request(t, base, cs...))
	for i, c := range cs {
		r := result(t, ev, c.ID)
		if r.Status != contracts.StatusPass {
			t.Errorf("%s: %s is not true (status %s, observed %v, %s)", c.ID, c.Assert.Expression, r.Status, r.Observed, r.Error)
		}
		_ = i
	}
}
