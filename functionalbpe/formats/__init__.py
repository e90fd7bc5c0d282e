"""Every file the package reads or writes, as plain data in and out, checked before use."""
