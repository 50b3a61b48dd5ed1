//! The built-in shell of a runtime worker (see DESIGN.md), independent of the browser.
