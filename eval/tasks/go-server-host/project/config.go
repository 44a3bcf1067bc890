// Package server holds the configuration of a small HTTP server.
package server

// Config is the server's configuration.
type Config struct {
	Port int
}

// Default returns the default configuration.
func Default() Config {
	return Config{Port: 8080}
}
