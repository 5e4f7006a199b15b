// Package filelock takes exclusive, non-blocking locks of open files, held
// until they are released or the file is closed, and released by the
// system when the process dies however it dies: flock on unix, LockFileEx
// on Windows. The spool's jobs and verify's output directories use it.
package filelock
