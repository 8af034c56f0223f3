package verify

import (
	"strings"

	"github.com/mxschmitt/playwright-go"

	"github.com/signoff/signoff/contracts"
)

// The device a viewport names. Below contracts.PhoneWidthPx it is a touch phone: a mobile
// Chrome user agent with matching client hints, touch events, a coarse pointer and no hover,
// device scale factor 3. From it on, a desktop Chrome. Neither says "Headless" anywhere a page
// can read it, and navigator.webdriver is false (LaunchArgs), so a page cannot serve the
// verifier something other than what that device gets.

// phoneScale is a current phone's device pixel ratio.
const phoneScale = 3

// device is the emulation for one viewport.
type device struct {
	phone     bool
	userAgent string
	metadata  map[string]any // Emulation.setUserAgentOverride's userAgentMetadata
}

func deviceFor(vp contracts.Viewport, browserVersion string) device {
	major := strings.SplitN(browserVersion, ".", 2)[0]
	if major == "" {
		major = "140"
	}
	full := browserVersion
	if full == "" {
		full = major + ".0.0.0"
	}
	brands := func(v string) []map[string]string {
		return []map[string]string{{"brand": "Chromium", "version": v}, {"brand": "Google Chrome", "version": v}, {"brand": "Not=A?Brand", "version": "24"}}
	}
	d := device{phone: contracts.IsPhone(vp)}
	if d.phone {
		d.userAgent = "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/" + major + ".0.0.0 Mobile Safari/537.36"
		d.metadata = map[string]any{"brands": brands(major), "fullVersionList": brands(full), "platform": "Android",
			"platformVersion": "14.0.0", "architecture": "", "model": "Pixel 8", "mobile": true, "bitness": "", "wow64": false}
	} else {
		d.userAgent = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/" + major + ".0.0.0 Safari/537.36"
		d.metadata = map[string]any{"brands": brands(major), "fullVersionList": brands(full), "platform": "Linux",
			"platformVersion": "6.1.0", "architecture": "x86", "model": "", "mobile": false, "bitness": "64", "wow64": false}
	}
	return d
}

// contextOptions sets the device on a new context's options.
func (d device) contextOptions(o *playwright.BrowserNewContextOptions) {
	o.UserAgent = playwright.String(d.userAgent)
	o.IsMobile = playwright.Bool(d.phone)
	o.HasTouch = playwright.Bool(d.phone)
	if d.phone {
		o.DeviceScaleFactor = playwright.Float(phoneScale)
	} else {
		o.DeviceScaleFactor = playwright.Float(1)
	}
}

// apply sets what context options cannot: the client hints that go with the user agent, and the
// pointer and hover media features of a touch screen. It runs on the page's own CDP session
// before the first navigation.
func (d device) apply(cdp playwright.CDPSession) error {
	if _, err := cdp.Send("Emulation.setUserAgentOverride", map[string]any{
		"userAgent": d.userAgent, "userAgentMetadata": d.metadata, "acceptLanguage": "en-US",
	}); err != nil {
		return worldErr("Emulation.setUserAgentOverride", err)
	}
	return nil
}
