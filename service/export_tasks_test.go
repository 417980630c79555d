package service

// TaskBatches returns how many batched begin/done messages this node sent
// and how many reports they carried.
func (s *Service) TaskBatches() (batches, reports int64) {
	return s.reports.TaskBatches()
}
