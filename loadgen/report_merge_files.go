package loadgen

// MergeFiles reads the reports that WriteJSON wrote to files (ReadJSON) and
// merges them (MergeReports), as load merge does. Its error names the file
// and the field it refuses.
func MergeFiles(files []string) (Report, error) {
	reports := make([]Report, len(files))
	for i, file := range files {
		var err error
		if reports[i], err = ReadJSON(file); err != nil {
			return Report{}, err
		}
	}
	return MergeReports(reports, files)
}
