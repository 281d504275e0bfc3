//go:build !race

package redisbloom

const raceEnabled = false
