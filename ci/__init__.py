"""The CI folder as a package (ci.gptoss_ci): a regular package, so no other distribution's `ci` shadows it."""
