//go:build race

package redisbloom

const raceEnabled = true
