package splitaxes

// Unravel turns a C-order linear index into an n-d index of grid (chunks per
// axis): the last axis varies fastest. Input task and output partition IDs
// of an array shuffle are such linear indexes.
func Unravel(i int, grid []int) []int {
	idx := make([]int, len(grid))
	for a := len(grid) - 1; a >= 0; a-- {
		if grid[a] > 0 {
			idx[a] = i % grid[a]
			i /= grid[a]
		}
	}
	return idx
}

// Ravel turns an n-d index of grid into its C-order linear index.
func Ravel(idx []int, grid []int) int {
	i := 0
	for a, g := range grid {
		i = i*g + idx[a]
	}
	return i
}
