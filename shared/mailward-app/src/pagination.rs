//! Cutting one page out of a sorted list (SPEC §4 common rules): 1-based `page`, `per_page`
//! 1 to 100 (default 25), and the `page_info` that describes the cut.

use crate::error::ServiceError;
use mailward_api_types::common::{DEFAULT_PER_PAGE, MAX_PAGE, MAX_PER_PAGE};
use mailward_api_types::{PageInfo, PageParams};

/// Validated `(page, per_page)`; out-of-range values are refused naming the parameter.
pub fn resolve(params: PageParams) -> Result<(u32, u32), ServiceError> {
    let page = params.page.unwrap_or(1);
    if page == 0 || page > MAX_PAGE {
        return Err(ServiceError::invalid(
            "page",
            "page must be between 1 and 1000000",
        ));
    }
    let per_page = params.per_page.unwrap_or(DEFAULT_PER_PAGE);
    if per_page == 0 || per_page > MAX_PER_PAGE {
        return Err(ServiceError::invalid(
            "per_page",
            "per_page must be between 1 and 100",
        ));
    }
    Ok((page, per_page))
}

/// Cuts one page out of the full, already sorted list.
pub fn paginate<T>(params: PageParams, items: Vec<T>) -> Result<(Vec<T>, PageInfo), ServiceError> {
    let (page, per_page) = resolve(params)?;
    let total = items.len();
    let start = usize::try_from(u64::from(page - 1) * u64::from(per_page)).unwrap_or(usize::MAX);
    let page_items: Vec<T> = items
        .into_iter()
        .skip(start)
        .take(per_page as usize)
        .collect();
    let has_more = start.saturating_add(page_items.len()) < total;
    Ok((
        page_items,
        PageInfo {
            total_count: total as u64,
            page,
            per_page,
            has_more,
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(page: Option<u32>, per_page: Option<u32>) -> PageParams {
        PageParams { page, per_page }
    }

    #[test]
    fn pages_are_cut_and_described() {
        let (items, info) = paginate(params(Some(2), Some(2)), vec![1, 2, 3, 4, 5]).unwrap();
        assert_eq!(items, [3, 4]);
        assert_eq!(
            info,
            PageInfo {
                total_count: 5,
                page: 2,
                per_page: 2,
                has_more: true
            }
        );
        let (items, info) = paginate(params(Some(3), Some(2)), vec![1, 2, 3, 4, 5]).unwrap();
        assert_eq!((items, info.has_more), (vec![5], false));
        let (items, _) = paginate(params(Some(9), None), vec![1]).unwrap();
        assert!(items.is_empty());
        assert_eq!(
            resolve(params(Some(0), None)).unwrap_err().param_name(),
            Some("page")
        );
        assert_eq!(
            resolve(params(None, Some(101))).unwrap_err().param_name(),
            Some("per_page")
        );
    }
}
