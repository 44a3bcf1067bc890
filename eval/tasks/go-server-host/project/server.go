package server

import "fmt"

// Addr is the address the server listens on.
func Addr(c Config) string {
	return fmt.Sprintf("127.0.0.1:%d", c.Port)
}
