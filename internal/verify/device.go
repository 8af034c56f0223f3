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

// The screen is taller than the page's viewport, as on the device: a phone's status bar, address
// bar and gesture bar, and a desktop's tab strip, toolbar and panel, take their share. A screen
// exactly the viewport's size is an emulator's.
const (
	phoneChromePx   = 96
	desktopChromePx = 120
)

// device is the emulation for one viewport.
type device struct {
	phone     bool
	userAgent string
	platform  string         // navigator.platform
	metadata  map[string]any // Emulation.setUserAgentOverride's userAgentMetadata
}

// deviceTimezone is the browser's time zone on every device: a place's, at UTC+0 all year
// round. A phone is set to where its owner is, never to "UTC" as a server is, and a verdict
// must not depend on the zone of the host that verifies.
const deviceTimezone = "Atlantic/Reykjavik"

// deviceLanguages is the Accept-Language header and navigator.languages (en-US, en): a
// person's browser lists the language and its generic form, a bare "en-US" is a driver's.
const deviceLanguages = "en-US,en;q=0.9"

// deviceCores is navigator.hardwareConcurrency on both devices: a current phone's, and a
// common desktop's. The host's own count (two on a CI machine) is itself a tell.
const deviceCores = 8

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
		// What Chrome on an ARM phone reports; the host's "Linux x86_64" beside an Android user
		// agent says "emulator".
		d.platform = "Linux armv81"
		d.metadata = map[string]any{"brands": brands(major), "fullVersionList": brands(full), "platform": "Android",
			"platformVersion": "14.0.0", "architecture": "", "model": "Pixel 8", "mobile": true, "bitness": "", "wow64": false}
	} else {
		d.userAgent = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/" + major + ".0.0.0 Safari/537.36"
		d.platform = "Linux x86_64"
		d.metadata = map[string]any{"brands": brands(major), "fullVersionList": brands(full), "platform": "Linux",
			"platformVersion": "6.1.0", "architecture": "x86", "model": "", "mobile": false, "bitness": "64", "wow64": false}
	}
	return d
}

// contextOptions sets the device on a new context's options.
func (d device) contextOptions(o *playwright.BrowserNewContextOptions) {
	if o.Viewport != nil {
		chrome := desktopChromePx
		if d.phone {
			chrome = phoneChromePx
		}
		o.Screen = &playwright.Size{Width: o.Viewport.Width, Height: o.Viewport.Height + chrome}
	}
	o.TimezoneId = playwright.String(deviceTimezone)
	o.UserAgent = playwright.String(d.userAgent)
	o.IsMobile = playwright.Bool(d.phone)
	o.HasTouch = playwright.Bool(d.phone)
	if d.phone {
		o.DeviceScaleFactor = playwright.Float(phoneScale)
	} else {
		o.DeviceScaleFactor = playwright.Float(1)
	}
}

// apply sets what context options cannot: the client hints and navigator.platform that go with
// the user agent, the device's core count, and the pointer and hover media features of a touch
// screen. It runs on the page's own CDP session before the first navigation. A dedicated
// worker is a target of its own and keeps the host's platform and core count: a page that
// compares its worker's with its own can still tell (README, Device).
func (d device) apply(cdp playwright.CDPSession) error {
	if _, err := cdp.Send("Emulation.setUserAgentOverride", map[string]any{
		"userAgent": d.userAgent, "userAgentMetadata": d.metadata, "acceptLanguage": deviceLanguages, "platform": d.platform,
	}); err != nil {
		return worldErr("Emulation.setUserAgentOverride", err)
	}
	if _, err := cdp.Send("Emulation.setHardwareConcurrencyOverride", map[string]any{"hardwareConcurrency": deviceCores}); err != nil {
		return worldErr("Emulation.setHardwareConcurrencyOverride", err)
	}
	return nil
}
